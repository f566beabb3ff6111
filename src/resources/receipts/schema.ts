import { z } from 'zod';
import { bodyId, paginationQuery, pathId, query, timestamp } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';
import { customIssue } from '../../platform/http/validation.js';

// Receipts (D8, D10 "Money"). A receipt documents a payment: `number` (prefix + running number, immutable),
// `debtor`, `items` (`{attendance, amount, text}`, empty values null, `attendance` a bare UUID), `total`,
// `paidAt`. The original shows `reversedBy` (the latest reversal; `reversals` lists all), a reversal shows
// `reverses` (references whose `name` is the receipt's number). Filters: `account`, `debtor`, `edition`,
// `modifiedSince`, pagination; newest first.

export const receiptItemOut = z.object({
  attendance: z.string(),
  amount: z.number().int(),
  text: z.string().nullable(),
}).meta({ id: 'ReceiptItem', description: 'A line of a receipt; amount in cents.' });

export const receiptOut = z.object({
  uuid: z.string(),
  number: z.string(),
  debtor: referenceSchema,
  items: z.array(receiptItemOut),
  total: z.number().int(),
  paidAt: timestampOut(),
  reverses: referenceSchema.optional(),
  reversedBy: referenceSchema.optional(),
  reversals: z.array(referenceSchema),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Receipt', description: 'A receipt documenting a payment (or, with `reverses`, its reversal). Amounts in cents.' });
export type ReceiptOut = z.infer<typeof receiptOut>;

export const receiptResponse = response(receiptOut);
export const receiptListResponse = response(z.array(receiptOut));

export const listReceiptsInput = z.object({
  account: query.string().meta({ description: 'account UUID or e-mail address (the debtor\'s account); matching nothing gives []' }),
  debtor: query.string().meta({ description: 'debtor UUID' }),
  edition: query.string().meta({ description: 'edition UUID or alias: receipts with an item in that edition' }),
  modifiedSince: query.dateFilter(),
  ...paginationQuery,
});
export type ListReceiptsInput = z.output<typeof listReceiptsInput>;

export const receiptIdInput = z.object({ uuid: pathId() });

/** A `paidAt` later than now by more than this is refused (422): clocks of clients differ a little. */
export const PAID_AT_CLOCK_SKEW_MS = 5 * 60_000;

/** Amounts are cents; at most 10 million euros per line. */
const MAX_AMOUNT = 1_000_000_000;

export const createReceiptInput = z.object({
  items: z
    .array(z.object({
      attendance: bodyId(),
      amount: z.number().int().min(0).max(MAX_AMOUNT).nullish()
        .meta({ description: 'cents; default the application\'s fee; a smaller amount posts the difference as a discount; above the fee: 422' }),
      text: z.string().trim().max(500).nullish(),
    }))
    .min(1)
    .max(200),
  paidAt: timestamp()
    .superRefine((d, ctx) => {
      // Issue 13: a payment in the future could take a number from next year's range.
      if (d.getTime() > Date.now() + PAID_AT_CLOCK_SKEW_MS) customIssue(ctx, 'This value must not be in the future.', 'tooHigh');
    })
    .nullish()
    .meta({ description: 'when it was paid; default now; not in the future (5 minutes of clock skew allowed); its year (Europe/Berlin) is the number\'s year' }),
  notify: z.boolean().nullish().meta({ description: 'default false; e-mails the receipt to the debtor' }),
});
export type CreateReceiptInput = z.output<typeof createReceiptInput>;

export const reverseReceiptInput = z.object({
  uuid: pathId(),
  items: z.array(bodyId()).min(1).max(200).nullish()
    .meta({ description: 'application UUIDs of the lines to reverse; default all lines not yet reversed' }),
  withdraw: z.boolean().nullish().meta({ description: 'default false; also withdraws those applications (frees their places)' }),
  notify: z.boolean().nullish().meta({ description: 'default false; e-mails the reversal to the debtor' }),
});
export type ReverseReceiptInput = z.output<typeof reverseReceiptInput>;
