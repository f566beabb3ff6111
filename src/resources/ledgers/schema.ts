import { z } from 'zod';
import { BOOKING_TYPES } from '../../domain/money.js';
import { paginationQuery, pathId, query } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';

// D8, D10 "Money": a ledger is a debtor's account for one edition: `balance` (what the debtor owes: the sum of
// its bookings) and `bookEntries`, its postings in order (`{uuid, date, amount, text, receipt, attendance}`,
// plus `type`; empty values null, spec 1.6; `receipt` and `attendance` bare UUIDs). Filters: `account`,
// `debtor`, `edition`, pagination.
export const bookEntryOut = z.object({
  uuid: z.string(),
  type: z.enum(BOOKING_TYPES),
  date: timestampOut(),
  amount: z.number().int(),
  text: z.string().nullable(),
  receipt: z.string().nullable(),
  attendance: z.string().nullable(),
}).meta({ id: 'BookEntry', description: 'One posting on a ledger; amount in cents.' });

export const ledgerOut = z.object({
  uuid: z.string(),
  debtor: referenceSchema,
  edition: referenceSchema,
  balance: z.number().int(),
  bookEntries: z.array(bookEntryOut),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Ledger', description: "A debtor's account for one edition; balance in cents is what the debtor owes." });
export type LedgerOut = z.infer<typeof ledgerOut>;

export const ledgerResponse = response(ledgerOut);
export const ledgerListResponse = response(z.array(ledgerOut));

export const listLedgersInput = z.object({
  account: query.string().meta({ description: 'account UUID or e-mail address (the debtor\'s account); matching nothing gives []' }),
  debtor: query.string().meta({ description: 'debtor UUID' }),
  edition: query.string().meta({ description: 'edition UUID or alias' }),
  ...paginationQuery,
});
export type ListLedgersInput = z.output<typeof listLedgersInput>;

export const ledgerIdInput = z.object({ uuid: pathId() });
