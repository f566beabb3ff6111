import { z } from 'zod';
import { RULE_CODES, type RuleCode, type Violation } from '../../domain/errors.js';

// Readable messages for every zod issue, in one place (spec 7: `detail` lines are `field: message`).
// Issue 26: set by configureZod() where a process starts (src/main.ts, the CLI's run, createApp, the tests'
// setup file), never as a side effect of importing this module, so messages do not depend on import order.
const customError: NonNullable<Parameters<typeof z.config>[0]>['customError'] = (iss) => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'This value is required.';
      if (iss.input === null) return 'This value should not be null.';
      return `This value should be of type ${iss.expected}.`;
    case 'too_big':
      if (iss.origin === 'string') return `This value is too long. It should have ${iss.maximum} characters or less.`;
      if (iss.origin === 'array') return `This collection should contain ${iss.maximum} elements or less.`;
      return `This value should be ${iss.maximum} or less.`;
    case 'too_small':
      if (iss.origin === 'string' && iss.minimum === 1) return 'This value should not be blank.';
      if (iss.origin === 'string') return `This value is too short. It should have ${iss.minimum} characters or more.`;
      if (iss.origin === 'array') return `This collection should contain ${iss.minimum} elements or more.`;
      return `This value should be ${iss.minimum} or more.`;
    case 'invalid_format':
      if (iss.format === 'email') return 'This value is not a valid email address.';
      if (iss.format === 'url') return 'This value is not a valid URL.';
      return 'This value is not valid.';
    case 'invalid_value':
      return `The value you selected is not a valid choice. Valid choices: ${iss.values.map(String).join(', ')}.`;
    case 'not_multiple_of':
      return 'This value should be a whole number.';
    default:
      return undefined;
  }
};

/** zod's global configuration: our messages. Idempotent; every entry point calls it before it parses anything. */
export function configureZod(): void {
  z.config({ customError });
}

/** A rule name attached to custom issues, so each kind of failure keeps its stable code. */
export function customIssue(ctx: z.RefinementCtx, message: string, rule: RuleCode): void {
  ctx.addIssue({ code: 'custom', message, params: { rule } });
}

/** `dates[0].begin` style paths (D10). */
export function propertyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

function ruleOf(issue: z.core.$ZodIssue): RuleCode {
  switch (issue.code) {
    case 'invalid_type':
      return issue.message === 'This value is required.' ? 'required' : 'type';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? 'tooLong' : 'tooHigh';
    case 'too_small':
      if (issue.origin === 'string' && issue.minimum === 1) return 'required';
      return issue.origin === 'string' || issue.origin === 'array' ? 'tooShort' : 'tooLow';
    case 'invalid_format':
      if (issue.format === 'email') return 'email';
      if (issue.format === 'url') return 'url';
      return 'format';
    case 'invalid_value':
      return 'choice';
    case 'not_multiple_of':
      return 'type';
    case 'unrecognized_keys':
      return 'unknownField';
    case 'custom': {
      const rule = (issue.params as { rule?: RuleCode } | undefined)?.rule;
      return rule && rule in RULE_CODES ? rule : 'invalid';
    }
    default:
      return 'invalid';
  }
}

export function violationsFromZod(issues: readonly z.core.$ZodIssue[]): Violation[] {
  return issues.map((issue) => ({
    propertyPath: propertyPath(issue.path),
    message: issue.message,
    code: RULE_CODES[ruleOf(issue)],
  }));
}
