import { z } from 'zod';
import { paginationQuery, pathId, query } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';

// D8, D10 "Money": a debtor is whoever owes fees, a family account or a participant without one; its own record
// (`uuid`, `name`, `account` or `participant` reference). `balance` (extension) is what it owes over all its
// ledgers. Filters: `account`, `q` (name and the account's e-mail address), pagination.
export const debtorOut = z.object({
  uuid: z.string(),
  name: z.string().optional(),
  account: referenceSchema.optional(),
  participant: referenceSchema.optional(),
  balance: z.number().int(),
  createdAt: timestampOut(),
}).meta({ id: 'Debtor', description: 'Whoever owes fees: a family account, or a participant without an account.' });
export type DebtorOut = z.infer<typeof debtorOut>;

export const debtorResponse = response(debtorOut);
export const debtorListResponse = response(z.array(debtorOut));

export const listDebtorsInput = z.object({
  account: query.string().meta({ description: 'account UUID or e-mail address; matching nothing gives []' }),
  q: query.string(),
  ...paginationQuery,
});
export type ListDebtorsInput = z.output<typeof listDebtorsInput>;

export const debtorIdInput = z.object({ uuid: pathId() });
