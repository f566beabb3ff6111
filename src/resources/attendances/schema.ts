import { z } from 'zod';
import { ATTENDANCE_STATES } from '../../domain/attendance-states.js';
import { bodyId, paginationQuery, pathId, query } from '../../platform/http/fields.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';

// Applications (spec 2.2, 4.3; D10 "Applications").
export const CREATE_STATUSES = ['confirmed', 'waitlisted', 'waiting'] as const;
export const QUESTION_TYPES = ['yn', 'int', 'txt', 'file'] as const;

// ---- output ---------------------------------------------------------------------------------------

const answerValue = z.union([z.string(), z.boolean(), z.number().int()]);

export const attendanceOut = z.object({
  uuid: z.string(),
  status: z.enum(ATTENDANCE_STATES),
  offer: referenceSchema,
  edition: referenceSchema,
  participant: referenceSchema.optional(),
  /** Age in full years at the offer's first date; kept when the participant is pseudonymised (D9). */
  participantAge: z.number().int().optional(),
  /** The participant's stable pseudonym, once pseudonymised (then `participant` is omitted, spec 2.2). */
  participantPseudonym: z.string().optional(),
  account: referenceSchema.optional(),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
  statusChangedAt: timestampOut(),
  confirmedAt: timestampOut().optional(),
  paid: z.boolean(),
  payable: z.boolean(),
  fee: z.number().int(),
  sorting: z.number().int().optional(),
  userPriority: z.number().int().optional(),
  allAlternateDates: z.boolean(),
  consentOutstanding: z.boolean(),
  heldBack: z.boolean(),
  decisionReason: z.string().optional(),
  createdByAdmin: z.boolean(),
  answers: z.array(z.object({ question: z.string(), label: z.string(), type: z.enum(QUESTION_TYPES), answer: answerValue })),
  files: z.array(z.object({ uuid: z.string(), question: z.string(), name: z.string(), mimeType: z.string(), size: z.number().int() })),
  receipts: z.array(z.string()),
  transitions: z.array(z.string()),
  piiMasked: z.boolean(),
}).meta({ id: 'Attendance', description: 'An application of a participant for an offer.' });
export type AttendanceOut = z.infer<typeof attendanceOut>;

export const attendanceResponse = response(attendanceOut);
export const attendanceListResponse = response(z.array(attendanceOut));

// ---- queries --------------------------------------------------------------------------------------

/** The filters of `GET /offers/{uuid}/attendances` (spec 4.2 names status, heldBack and paging; the rest apply too). */
const listFilters = {
  participant: query.string().meta({ description: 'participant UUID; matching nothing gives []' }),
  account: query.string().meta({ description: 'account UUID or e-mail address; matching nothing gives []' }),
  edition: query.string().meta({ description: 'edition UUID or alias' }),
  host: query.string().meta({ description: 'organiser UUID or alias' }),
  status: query.oneOf(ATTENDANCE_STATES),
  paid: query.boolean(),
  payable: query.boolean(),
  heldBack: query.boolean(),
  modifiedSince: query.dateFilter(),
  ...paginationQuery,
};

export const listAttendancesInput = z.object({
  offer: query.string().meta({ description: 'offer UUID; the list is then in participant-list order; an unknown offer gives 404' }),
  ...listFilters,
});
export type ListAttendancesInput = z.output<typeof listAttendancesInput>;

export const offerAttendancesInput = z.object({ uuid: pathId(), ...listFilters });
export type OfferAttendancesInput = z.output<typeof offerAttendancesInput>;

export const attendanceIdInput = z.object({ uuid: pathId() });

// ---- writes ---------------------------------------------------------------------------------------

/** `notify: true` needs the decision to be committed (spec 4.3: with `commit: false`, `notify` must be false). */
function notifyNeedsCommit(v: { notify?: boolean | null; commit?: boolean | null }, ctx: z.RefinementCtx) {
  if (v.notify === true && v.commit === false) {
    ctx.addIssue({
      code: 'custom', path: ['notify'], params: { rule: 'invalid' },
      message: 'notify must be false when commit is false: a held-back decision is not told to the family.',
    });
  }
}

/**
 * Spec 2.2 `fee`: what this participant pays, which may differ from the offer's (a discount); admins only.
 * Absent: the offer's fee (on create) or unchanged (PATCH); null on PATCH: the offer's fee again.
 */
const ownFee = () => z.number().int().min(0).max(100_000_000).nullish()
  .meta({ description: 'fee in cents this participant pays (admins); default the offer\'s fee; null on PATCH: the offer\'s fee again' });

export const createAttendanceInput = z
  .object({
    offer: bodyId(),
    participant: bodyId(),
    status: z.enum(CREATE_STATUSES).nullish(),
    notify: z.boolean().nullish(),
    commit: z.boolean().nullish(),
    allAlternateDates: z.boolean().nullish(),
    fee: ownFee(),
  })
  .superRefine(notifyNeedsCommit);
export type CreateAttendanceInput = z.output<typeof createAttendanceInput>;

export const transitionAttendanceInput = z
  .object({
    uuid: pathId(),
    transition: z.string().min(1).max(100),
    notify: z.boolean().nullish(),
    commit: z.boolean().nullish(),
  })
  .superRefine(notifyNeedsCommit);
export type TransitionAttendanceInput = z.output<typeof transitionAttendanceInput>;

export const transferAttendanceInput = z
  .object({
    uuid: pathId(),
    offer: bodyId(),
    status: z.enum(CREATE_STATUSES).nullish(),
    notify: z.boolean().nullish(),
    commit: z.boolean().nullish(),
  })
  .superRefine((v, ctx) => {
    notifyNeedsCommit(v, ctx);
    // Spec 4.3 "Transfer": only a confirmation is sent, so notify needs status confirmed (422).
    if (v.notify === true && v.status !== 'confirmed') {
      ctx.addIssue({
        code: 'custom', path: ['notify'], params: { rule: 'invalid' },
        message: 'notify can only be true with status confirmed: only a confirmation is sent on a transfer.',
      });
    }
  });
export type TransferAttendanceInput = z.output<typeof transferAttendanceInput>;

/** PATCH (spec 4.3 "Update"): only keys sent; booleans ignore null; `userPriority` null clears; answers merge. */
export const updateAttendanceInput = z.object({
  uuid: pathId(),
  fee: ownFee(),
  payable: z.boolean().nullish(),
  allAlternateDates: z.boolean().nullish(),
  userPriority: z.number().int().max(1_000_000).nullish(),
  answers: z
    .record(z.string().max(100), answerValue.nullable())
    .meta({ description: 'keys are question UUIDs; values are strings, booleans or whole numbers; null removes an answer' })
    .nullish(),
});
export type UpdateAttendanceInput = z.output<typeof updateAttendanceInput>;

