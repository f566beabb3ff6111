import { DateTime } from 'luxon';
import { z } from 'zod';
import { bodyRef, dateOnly, listQuery, pathId, query } from '../../platform/http/fields.js';
import { ZONE } from '../../platform/http/dates.js';
import { referenceSchema, response, timestampOut } from '../../platform/http/response.js';
import { customIssue } from '../../platform/http/validation.js';

// D6: `/participants`, a child (`uuid`, `firstname`, `lastname`, `name`, `dateOfBirth`, `email`, `phone`,
// `account` reference; filter `account`). `name` is derived ("firstname lastname") and read-only.

/** A required name: trimmed, not blank; ignores null on PATCH (spec 1.12). */
const personName = z.string().trim().min(1).max(100);

/** An optional text: trimmed; an empty string counts as no value (null). */
const text = (max: number) =>
  z.string().trim().max(max).transform((v) => (v === '' ? null : v));

/** An optional e-mail address; an empty string counts as no value. */
const email = z.preprocess(
  (v) => (typeof v === 'string' ? (v.trim() === '' ? null : v.trim()) : v),
  z.email().max(254).nullable(),
);

/**
 * `YYYY-MM-DD` (spec 1.7). The shared `dateOnly()` also takes a full timestamp with offset and keeps its
 * calendar date as written (`2015-03-01T23:30:00-05:00` → `2015-03-01`): we accept that for dates of birth.
 * A date of birth in the future (Berlin's today) is out of range.
 */
const dateOfBirth = dateOnly().superRefine((d, ctx) => {
  if (d > DateTime.now().setZone(ZONE).toISODate()!) customIssue(ctx, 'A date of birth cannot be in the future.', 'range');
});

/** The optional fields, shared by create and update; each accepts null (clears it on PATCH). */
const optionalFields = {
  dateOfBirth: dateOfBirth.nullish(),
  email: email.optional(),
  phone: text(50).nullish(),
  /** The family account: UUID, base58 form or the account's e-mail address (spec 1.5). */
  account: bodyRef().meta({ description: 'account UUID, base58 form, or the account\'s e-mail address' }).nullish(),
};

export const participantOut = z.object({
  uuid: z.string(),
  firstname: z.string().optional(),
  lastname: z.string().optional(),
  name: z.string().optional(),
  dateOfBirth: z.string().meta({ format: 'date', example: '2016-05-23' }).optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
  /** D9: the stable pseudonym, present once the participant was pseudonymised (names and contact data removed). */
  pseudonym: z.string().optional(),
  pseudonymisedAt: timestampOut().optional(),
  account: referenceSchema.optional(),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Participant', description: 'A child (admin only).' });
export type ParticipantOut = z.infer<typeof participantOut>;

export const participantResponse = response(participantOut);
export const participantListResponse = response(z.array(participantOut));

export const listParticipantsInput = z.object({
  ...listQuery,
  account: query.string().meta({ description: 'account UUID, base58 form, or e-mail address; matching nothing gives []' }),
});
export type ListParticipantsInput = z.output<typeof listParticipantsInput>;

export const participantIdInput = z.object({ uuid: pathId() });

export const createParticipantInput = z.object({ firstname: personName, lastname: personName, ...optionalFields });
export type CreateParticipantInput = z.output<typeof createParticipantInput>;

/** PATCH: only keys sent apply; null clears optional fields (`account` null detaches); names ignore null. */
export const updateParticipantInput = z.object({
  uuid: pathId(),
  firstname: personName.nullish(),
  lastname: personName.nullish(),
  ...optionalFields,
});
export type UpdateParticipantInput = z.output<typeof updateParticipantInput>;
