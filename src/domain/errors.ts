// What went wrong, in the domain's words (issue 15). Rules and services throw or return these; the HTTP
// edge maps each code to a status once (src/platform/http/problem.ts), so nothing here knows about HTTP.

/**
 * One code per meaning; several meanings may share an answer status:
 * - `not_found`: the addressed record does not exist, or the caller may not see it.
 * - `not_permitted`: the caller may see the record but not do this to it.
 * - `state_conflict`: the record's current state does not allow this now (a transition, a disabled webhook).
 * - `still_referenced`: the record cannot be deleted while other records refer to it.
 * - `unknown_transition`: the named transition is not one of the workflow's.
 * - `refused`: a well-formed request that a rule refuses for this record (`detail` says which).
 * - `invalid_input`: values that are malformed or out of range; `violations` names each field.
 */
export const ERROR_CODES = [
  'not_found', 'not_permitted', 'state_conflict', 'still_referenced', 'unknown_transition', 'refused', 'invalid_input',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** One stable UUID per kind of validation rule (D10), shown in `violations[].code`. */
export const RULE_CODES = {
  required: 'c1051bb4-d103-4f74-8988-acbcafc7fdc3',
  type: 'ba785a8c-82cb-4283-967c-3cf342181b40',
  tooLong: 'd94b19cc-114f-4f44-9cc4-4138e80a87b9',
  tooShort: '9ff3fdc4-b214-49db-8718-39c315e33d45',
  tooHigh: '2d28afcb-e32e-45fb-a815-01c431a86a69',
  tooLow: '76454e69-502c-46c5-9643-f447d837c4d5',
  choice: '8e179f1b-97aa-4560-a02f-2a8b42e49df7',
  identifier: '51120b12-a2bc-41bf-aa53-cd73daf330d0',
  timestamp: '1a9da513-2640-4f84-9b6a-4d99dcddc628',
  date: '69819696-02ac-4a99-9ff0-14e127c4d1bc',
  url: '57c2f299-1154-4870-89bb-ef3b1f5ad229',
  email: 'bd79c0ab-ddba-46cc-a703-a7a4b08de310',
  format: 'de1e3db3-5ed4-4941-aae4-59f3667cc3a3',
  unique: '23bd9dbf-6b9b-41cd-a99e-4844bcf3077f',
  unknownField: '7703c766-b5d5-4cef-ace7-ae0dd82304e9',
  range: '04b91c99-a946-4221-afc5-e65ebac401eb',
  invalid: 'e4b5a5d1-2f3c-4bd4-9a4e-0c8a3f7e2b61',
  imageTooLarge: '5f6c2a8e-3b1d-4e7a-9c0f-8d2b1a6e4c37',
  imageUnverifiable: 'a3e1c9d4-7b2f-4a58-8e61-2c9d0f7b5a14',
  // Issue 21: the rules of a family's own application (src/domain/family-applications.ts).
  notOpen: '3c8f5d2a-6e41-4b9c-9a17-5d0e2f8b6c43',
  deadlinePassed: '8b2e6f41-0c7d-4a35-b9e8-1f4d7c2a9e56',
  outsidePhase: 'c5a9e3d7-2b18-4f60-8d4c-7e1b9a3f0d82',
  applicationLimit: 'e7d1b4c8-9a2f-4e53-a6b0-3c8f5e1d7a29',
  ageLimit: '1f6a8c3e-5d92-4b7f-8e04-a2c9d6b1f375',
  fileUnavailable: '9d4b2e7a-c163-4f8e-b5a0-6e2d8c4f1b97',
  duplicate: '6a3e9c1f-8b57-4d20-9f6e-b4d1a7c3e852',
} as const;

export type RuleCode = keyof typeof RULE_CODES;

/** One field that broke a rule: `dates[0].begin`, a readable message, the rule's UUID. */
export type Violation = { propertyPath: string; message: string; code: string };

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly violations?: Violation[],
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const notFound = (detail: string) => new DomainError('not_found', detail);
export const forbidden = (detail: string) => new DomainError('not_permitted', detail);
export const conflict = (detail: string) => new DomainError('state_conflict', detail);
export const stillReferenced = (detail: string) => new DomainError('still_referenced', detail);
/** A well-formed request that makes no sense for the record: `detail` only (spec 7). */
export const unprocessable = (detail: string) => new DomainError('refused', detail);

/** Malformed or out-of-range values, one violation per field (spec 7). */
export function invalid(violations: Violation[]): DomainError {
  return new DomainError('invalid_input', violations.map((v) => `${v.propertyPath}: ${v.message}`).join('\n'), violations);
}

export function violation(propertyPath: string, message: string, rule: RuleCode): Violation {
  return { propertyPath, message, code: RULE_CODES[rule] };
}
