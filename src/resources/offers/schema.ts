import { z } from 'zod';
import { ATTENDANCE_STATES } from '../../domain/attendance-states.js';
import { OFFER_PLACES } from '../../domain/offer-workflow.js';
import { validateRecurrence } from '../../domain/recurrence.js';
import { bodyRef, pathId, paginationQuery, query, timestamp } from '../../platform/http/fields.js';
import { finalResponse, referenceSchema, response, timestampOut } from '../../platform/http/response.js';
import { customIssue } from '../../platform/http/validation.js';

// Offers (spec 2.3, 4.2; D5, D10 "Offers").
export const OFFER_SORT_KEYS = ['name', 'begin', 'fee', 'createdAt', 'modifiedAt'] as const;
export type OfferSortKey = (typeof OFFER_SORT_KEYS)[number];
export const QUESTION_TYPES = ['yn', 'int', 'txt', 'file'] as const;

// ---- output ---------------------------------------------------------------------------------------

const dateOut = z.object({ uuid: z.string(), begin: timestampOut(), end: timestampOut(), recurrence: z.string().optional() });
const questionOut = z.object({ uuid: z.string(), label: z.string(), type: z.enum(QUESTION_TYPES), required: z.boolean() });

/** D10: `attendances` has every application state as a key with its count. */
export const attendanceCounts = z.object(Object.fromEntries(ATTENDANCE_STATES.map((s) => [s, z.number().int().min(0)])) as Record<(typeof ATTENDANCE_STATES)[number], z.ZodNumber>)
  .meta({ id: 'AttendanceCounts', description: 'The number of the offer\'s applications in each state (token view).' });

export const offerOut = z.object({
  uuid: z.string(),
  name: z.string(),
  alias: z.string(),
  edition: referenceSchema,
  hosts: z.array(referenceSchema),
  status: z.array(z.enum(OFFER_PLACES)),
  teaser: z.string().optional(),
  description: z.string().optional(),
  dates: z.array(dateOut),
  fee: z.number().int().optional(),
  minAge: z.number().int().optional(),
  maxAge: z.number().int().optional(),
  minParticipants: z.number().int().optional(),
  maxParticipants: z.number().int().optional(),
  vacancies: z.number().int().optional(),
  fullyBooked: z.boolean(),
  requiresApplication: z.boolean(),
  onlineApplication: z.boolean(),
  applicationDeadline: timestampOut().optional(),
  applyText: z.string().optional(),
  meetingPoint: z.string().optional(),
  meetingAddress: z.string().optional(),
  meetingLat: z.number().optional(),
  meetingLng: z.number().optional(),
  bring: z.string().optional(),
  wheelchairAccessible: z.boolean(),
  categories: z.array(referenceSchema),
  url: z.string().optional(),
  media: z.array(z.string()),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
  // token view only
  publish: z.enum(['public', 'private_link']).optional(),
  comment: z.string().optional(),
  contact: z.string().optional(),
  attendances: attendanceCounts.optional(),
  overbooked: z.number().int().min(0).optional()
    .meta({ description: 'confirmed places beyond maxParticipants (an admin confirmed past capacity); 0 otherwise' }),
  applicationQuestions: z.array(questionOut).optional(),
  transitions: z.array(z.string()).optional(),
  variantBase: referenceSchema.optional(),
  variants: z.array(referenceSchema).optional(),
}).meta({ id: 'Offer', description: 'An offer of the programme. Token-only fields are absent for anonymous callers and legacy tokens.' });
export type OfferOut = z.infer<typeof offerOut>;

/** The offer's and the list's answers are final as the service writes them (no run-time check in production; tests check them). */
export const offerResponse = finalResponse(offerOut);
export const offerListResponse = finalResponse(z.array(offerOut));

// ---- queries --------------------------------------------------------------------------------------

export const listOffersInput = z.object({
  edition: query.string(),
  category: query.string(),
  host: query.string(),
  from: query.dateFilter(),
  until: query.dateFilter(),
  q: query.string(),
  status: query.oneOf(OFFER_PLACES),
  modifiedSince: query.dateFilter(),
  sort: query.choice(OFFER_SORT_KEYS),
  order: query.choice(['asc', 'desc'] as const),
  ...paginationQuery,
});
export type ListOffersInput = z.output<typeof listOffersInput>;

export const offerIdInput = z.object({ uuid: pathId() });

// ---- writes ---------------------------------------------------------------------------------------

const name = z.string().trim().min(1).max(200);
const alias = z.string().trim().min(1).max(80);
const text = (max = 5000) => z.string().max(max);
const int = (min: number, max: number) => z.number().int().min(min).max(max);

const httpUrl = z.string().max(2000).superRefine((v, ctx) => {
  let ok = false;
  try {
    const u = new URL(v);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
  } catch {
    ok = false;
  }
  if (!ok) customIssue(ctx, 'This value is not a valid absolute http(s) URL.', 'url');
});

const dateIn = z
  .object({
    begin: timestamp(),
    end: timestamp(),
    recurrence: z.string().max(500).nullish(),
  })
  .superRefine((d, ctx) => {
    if (d.end.getTime() < d.begin.getTime()) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'The end must not be before the begin.', params: { rule: 'range' } });
    }
    if (d.recurrence) {
      const err = validateRecurrence(d.recurrence, d.begin);
      if (err) ctx.addIssue({ code: 'custom', path: ['recurrence'], message: err, params: { rule: 'format' } });
    }
  });
export type OfferDateIn = z.output<typeof dateIn>;

const questionIn = z.object({
  uuid: pathId().optional(),
  label: z.string().trim().min(1).max(500),
  type: z.enum(QUESTION_TYPES),
  required: z.boolean().optional(),
});

const refList = z.array(bodyRef()).max(50);

/** Writable fields (D5); every one optional here, `nullish` so PATCH can clear. */
const writable = {
  alias: alias.nullish(),
  hosts: refList.nullish(),
  categories: refList.nullish(),
  teaser: text(500).nullish(),
  description: text(50_000).nullish(),
  dates: z.array(dateIn).max(500).nullish(),
  fee: int(0, 100_000_000).nullish(),
  minAge: int(0, 99).nullish(),
  maxAge: int(0, 99).nullish(),
  minParticipants: int(0, 100_000).nullish(),
  maxParticipants: int(0, 100_000).nullish(),
  requiresApplication: z.boolean().nullish(),
  onlineApplication: z.boolean().nullish(),
  applicationDeadline: timestamp().nullish(),
  applyText: text().nullish(),
  meetingPoint: text(500).nullish(),
  meetingAddress: text(1000).nullish(),
  meetingLat: z.number().min(-90).max(90).nullish(),
  meetingLng: z.number().min(-180).max(180).nullish(),
  bring: text().nullish(),
  wheelchairAccessible: z.boolean().nullish(),
  media: z.array(httpUrl).max(50).nullish(),
  publish: z.enum(['public', 'private_link']).nullish(),
  comment: text(20_000).nullish(),
  contact: text(1000).nullish(),
  applicationQuestions: z.array(questionIn).max(100).nullish(),
};

function crossChecks(v: { minAge?: number | null; maxAge?: number | null; minParticipants?: number | null; maxParticipants?: number | null }, ctx: z.RefinementCtx) {
  if (v.minAge != null && v.maxAge != null && v.minAge > v.maxAge) {
    ctx.addIssue({ code: 'custom', path: ['maxAge'], message: 'maxAge must not be below minAge.', params: { rule: 'range' } });
  }
  if (v.minParticipants != null && v.maxParticipants != null && v.minParticipants > v.maxParticipants) {
    ctx.addIssue({ code: 'custom', path: ['maxParticipants'], message: 'maxParticipants must not be below minParticipants.', params: { rule: 'range' } });
  }
}

export const createOfferInput = z.object({ name, edition: bodyRef(), ...writable }).superRefine(crossChecks);
export type CreateOfferInput = z.output<typeof createOfferInput>;

/** PATCH (spec 1.12): only keys sent; null clears; `name` and `edition` ignore null. */
export const updateOfferInput = z.object({ uuid: pathId(), name: name.nullish(), edition: bodyRef().nullish(), ...writable }).superRefine(crossChecks);
export type UpdateOfferInput = z.output<typeof updateOfferInput>;

/**
 * Spec 4.2: the same shape as the application transition request, `{transition, notify?, commit?}`, null
 * read as absent. An offer transition holds no decision back, so `commit: false` cannot be applied: it is
 * refused (422 on `commit`) instead of being ignored (issue 22.5).
 */
export const transitionOfferInput = z
  .object({
    uuid: pathId(),
    transition: z.string().min(1).max(100),
    notify: z.boolean().nullish().meta({ description: 'default false; cancel and relaunch e-mail the confirmed families' }),
    commit: z.boolean().nullish().meta({ description: 'true or left out: an offer transition holds nothing back, so false is refused (422)' }),
  })
  .superRefine((v, ctx) => {
    if (v.commit === false) {
      ctx.addIssue({
        code: 'custom', path: ['commit'], params: { rule: 'invalid' },
        message: 'An offer transition holds nothing back: its decisions take effect at once, so commit must be true or left out.',
      });
    }
  });
export type TransitionOfferInput = z.output<typeof transitionOfferInput>;

export const copyOfferInput = z.object({ uuid: pathId(), edition: bodyRef().nullish() });
export type CopyOfferInput = z.output<typeof copyOfferInput>;

/** Spec 4.2 `POST /offers/{uuid}/refill` (D5): `notify` [true]. */
export const refillOfferInput = z.object({ uuid: pathId(), notify: z.boolean().nullish() });
export type RefillOfferInput = z.output<typeof refillOfferInput>;
