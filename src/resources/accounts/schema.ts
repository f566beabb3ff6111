import { z } from 'zod';
import { listQuery, pathId } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';

// D6: `/accounts`, a family (`uuid`, `email` unique, `firstname`, `lastname`, `name`, `phone`, address fields,
// `participants` as references). `name` is derived ("firstname lastname") and read-only; a sent `name` is ignored.

/** An optional text: trimmed; an empty string counts as no value (null). */
const text = (max: number) =>
  z.string().trim().max(max).transform((v) => (v === '' ? null : v));

/** The account's e-mail address, trimmed; required on create, ignores null on PATCH (spec 1.12). */
const email = z.preprocess((v) => (typeof v === 'string' ? v.trim() : v), z.email().max(254));

/** The optional fields, shared by create and update; each accepts null (clears it on PATCH). */
const optionalFields = {
  firstname: text(100).nullish(),
  lastname: text(100).nullish(),
  phone: text(50).nullish(),
  street: text(200).nullish(),
  zip: text(20).nullish(),
  city: text(100).nullish(),
};

/** The optional fields a write may set or clear. */
export const ACCOUNT_OPTIONAL_FIELDS = ['firstname', 'lastname', 'phone', 'street', 'zip', 'city'] as const;

export const accountOut = z.object({
  uuid: z.string(),
  /** Always present, except on an account pseudonymised after the retention period (D9). */
  email: z.string().optional(),
  firstname: z.string().optional(),
  lastname: z.string().optional(),
  name: z.string().optional(),
  phone: z.string().optional(),
  street: z.string().optional(),
  zip: z.string().optional(),
  city: z.string().optional(),
  /** The account's children; always present, `[]` when none (spec 1.6). */
  participants: z.array(referenceSchema),
  /** D9: when the account lost its personal data, left without a living child after the retention period. */
  pseudonymisedAt: timestampOut().optional(),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Account', description: 'A family: the account that applies for its children (admin only).' });
export type AccountOut = z.infer<typeof accountOut>;

export const accountResponse = response(accountOut);
export const accountListResponse = response(z.array(accountOut));

export const listAccountsInput = z.object({ ...listQuery });
export type ListAccountsInput = z.output<typeof listAccountsInput>;

export const accountIdInput = z.object({ uuid: pathId() });

export const createAccountInput = z.object({ email, ...optionalFields });
export type CreateAccountInput = z.output<typeof createAccountInput>;

/** PATCH: only keys sent apply; null clears optional fields; `email` ignores null (spec 1.12). */
export const updateAccountInput = z.object({ uuid: pathId(), email: email.nullish(), ...optionalFields });
export type UpdateAccountInput = z.output<typeof updateAccountInput>;
