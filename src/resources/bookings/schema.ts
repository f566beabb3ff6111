import { z } from 'zod';
import { BOOKING_TYPES } from '../../domain/money.js';
import { paginationQuery, pathId, query } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';

// D8, D10 "Money": a booking is one signed posting (charge positive, payment negative), never changed or
// deleted (PATCH/DELETE: 405). It names its debtor and edition (references), its ledger, the application
// (`attendance`, a bare UUID: the application may since have been deleted or transferred) and the receipt
// (reference; its `name` is the receipt's number) where they apply. Filters: `account`, `debtor`, `edition`,
// `attendance`, `receipt`, pagination; in posting order.
export const bookingOut = z.object({
  uuid: z.string(),
  type: z.enum(BOOKING_TYPES),
  date: timestampOut(),
  amount: z.number().int(),
  text: z.string().optional(),
  debtor: referenceSchema,
  edition: referenceSchema,
  ledger: z.string(),
  attendance: z.string().optional(),
  receipt: referenceSchema.optional(),
}).meta({ id: 'Booking', description: "One signed posting on a debtor's ledger (never changed or deleted). Amounts in cents: positive is owed, negative paid." });
export type BookingOut = z.infer<typeof bookingOut>;

export const bookingResponse = response(bookingOut);
export const bookingListResponse = response(z.array(bookingOut));

export const listBookingsInput = z.object({
  account: query.string().meta({ description: 'account UUID or e-mail address (the debtor\'s account); matching nothing gives []' }),
  debtor: query.string().meta({ description: 'debtor UUID' }),
  edition: query.string().meta({ description: 'edition UUID or alias' }),
  attendance: query.string().meta({ description: 'application UUID' }),
  receipt: query.string().meta({ description: 'receipt UUID' }),
  ...paginationQuery,
});
export type ListBookingsInput = z.output<typeof listBookingsInput>;

export const bookingIdInput = z.object({ uuid: pathId() });
