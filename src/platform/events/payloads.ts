import { z } from 'zod';
import { ATTENDANCE_STATES } from '../../domain/attendance-states.js';
import { OFFER_PLACES } from '../../domain/offer-workflow.js';

// Issue 14: what each event's `data` holds. References are bare UUIDs, states are the API's own words; never
// names, e-mail addresses, phone numbers, addresses, birth dates or free text: an integration reads those
// through the API with its own token's rights. A reference that does not apply is left out (spec 1.6: no
// nulls). One schema per event type, so the OpenAPI document shows each payload.

const id = (description: string) => z.string().meta({ format: 'uuid', description });
const attendanceState = z.enum(ATTENDANCE_STATES);
const offerStatus = z.array(z.enum(OFFER_PLACES)).meta({ description: 'the offer\'s places after the change (D5)' });

const attendanceRefs = {
  attendance: id('the application'),
  offer: id('its offer'),
  edition: id('the offer\'s edition'),
  participant: id('the child'),
  account: id('the child\'s family account; absent when the child has none').optional(),
};

export const EVENT_PAYLOADS = {
  'attendance.created': z.object({
    ...attendanceRefs,
    status: attendanceState,
    heldBack: z.boolean(),
    decisionReason: z.string().optional().meta({ description: 'set when the system decided (procedure, capacity); a fixed text, not free text' }),
    createdByAdmin: z.boolean().optional().meta({ description: 'false for an application a family made on the website (POST /family-applications); absent (true) for the team\'s' }),
    consentOutstanding: z.boolean().optional().meta({ description: 'a guardian\'s consent is missing (family applications only)' }),
  }).meta({ id: 'AttendanceCreatedEventData', description: 'An application was made (POST /attendances, or a family\'s POST /family-applications: then in `email_unconfirmed` or `consents_outstanding` until confirmed, and `createdByAdmin` false). An application made again for the same offer reuses the old one and reports `attendance.status_changed` (cause `reapplication`); a transfer\'s new application reports `attendance.transferred`.' }),
  'attendance.status_changed': z.object({
    ...attendanceRefs,
    from: attendanceState,
    to: attendanceState,
    heldBack: z.boolean().meta({ description: 'true while the decision is held back (lot, commit:false); false once it is final' }),
    decisionReason: z.string().optional().meta({ description: 'the system\'s reason for the decision (lottery, capacity), when there is one' }),
    cause: z.enum(['transition', 'reapplication', 'refill', 'allocation', 'commit', 'reversal', 'await_email', 'await_consents', 'expiry']).meta({
      description: 'what changed it: a transition; an application made again for the same offer (POST /attendances reuses it and decides again; a family\'s POST /family-applications reuses one its link\'s expiry withdrew); a refill moving the waiting list up; a lottery run (held back); the commit releasing a held-back decision (from = to, heldBack false); a receipt reversal that withdrew it; the family confirmed its address (`await_email`, POST /family-applications/confirm) or a guardian consented (`await_consents`, POST /family-applications/consent): from `email_unconfirmed` or `consents_outstanding` to the other wait, or to the state the procedure decided; a confirmation or consent not given within 72 hours (`expiry`: withdrawn)',
    }),
  }).meta({ id: 'AttendanceStatusChangedEventData', description: 'An application changed state, or its held-back decision was released.' }),
  'attendance.transferred': z.object({
    attendance: id('the new application (a transfer makes a new one)'),
    previousAttendance: id('the application it replaces (deleted)'),
    offer: id('the target offer'),
    edition: id('the target offer\'s edition'),
    previousOffer: id('the source offer'),
    previousEdition: id('the source offer\'s edition'),
    participant: id('the child'),
    account: id('the child\'s family account; absent when the child has none').optional(),
    from: attendanceState.meta({ description: 'the state of the previous application' }),
    status: attendanceState.meta({ description: 'the state of the new application' }),
    heldBack: z.boolean(),
  }).meta({ id: 'AttendanceTransferredEventData', description: 'An application was moved to another offer (POST /attendances/{uuid}/transfer).' }),
  'attendance.deleted': z.object({
    ...attendanceRefs,
    status: attendanceState.meta({ description: 'its state when it was deleted' }),
  }).meta({ id: 'AttendanceDeletedEventData', description: 'An application was deleted (DELETE /attendances/{uuid}; with its child: DELETE /participants/{uuid}, or the expiry of an unconfirmed family submission that made the child).' }),
  'offer.published': z.object({
    offer: id('the offer'),
    edition: id('its edition'),
    status: offerStatus,
  }).meta({ id: 'OfferPublishedEventData', description: 'An offer was published (transition `publish`).' }),
  'offer.changed': z.object({
    offer: id('the offer'),
    edition: id('its edition'),
    status: offerStatus,
    fields: z.array(z.string()).meta({ description: 'names of the fields the change set (the keys a PATCH sent, also when a value stayed the same; `status` for a transition other than publish, cancel, relaunch; for a variant, the descriptive fields copied from its base)' }),
  }).meta({ id: 'OfferChangedEventData', description: 'An offer was changed: PATCH, a transition other than publish/cancel/relaunch, or its variant base\'s descriptive fields copied to it.' }),
  'offer.cancelled': z.object({
    offer: id('the offer'),
    edition: id('its edition'),
    status: offerStatus,
    notify: z.boolean().meta({ description: 'whether the confirmed families are e-mailed' }),
  }).meta({ id: 'OfferCancelledEventData', description: 'A published offer was cancelled (transition `cancel`); its applications keep their states.' }),
  'offer.relaunched': z.object({
    offer: id('the offer'),
    edition: id('its edition'),
    status: offerStatus,
    notify: z.boolean().meta({ description: 'whether the confirmed families are e-mailed' }),
  }).meta({ id: 'OfferRelaunchedEventData', description: 'A cancelled offer was relaunched (transition `relaunch`).' }),
  'edition.allocated': z.object({
    edition: id('the edition'),
    allocation: id('the lottery run (the edition\'s `allocations`)'),
    seed: z.number().int(),
    confirmed: z.number().int(),
    waitlisted: z.number().int(),
    unfulfilled: z.number().int(),
  }).meta({ id: 'EditionAllocatedEventData', description: 'A lottery run was drawn; its decisions are held back until the commit (each also reported as `attendance.status_changed` with cause `allocation`).' }),
  'edition.committed': z.object({
    edition: id('the edition'),
    released: z.number().int().meta({ description: 'how many held-back decisions were released (each also reported as `attendance.status_changed` with cause `commit`)' }),
    notify: z.boolean(),
  }).meta({ id: 'EditionCommittedEventData', description: 'The edition\'s held-back decisions were released (POST /editions/{uuid}/commit).' }),
  'receipt.created': z.object({
    receipt: id('the receipt'),
    debtor: id('the debtor (its record names the account or participant)'),
    attendances: z.array(id('an application it pays')),
    total: z.number().int().meta({ description: 'cents' }),
  }).meta({ id: 'ReceiptCreatedEventData', description: 'A payment was recorded (POST /receipts); its applications are paid.' }),
  'receipt.reversed': z.object({
    receipt: id('the reversed receipt'),
    reversal: id('the reversal receipt (negated items)'),
    debtor: id('the debtor'),
    attendances: z.array(id('an application made unpaid again')),
    total: z.number().int().meta({ description: 'the reversal\'s total in cents (negative)' }),
    withdraw: z.boolean().meta({ description: 'whether those applications were also withdrawn (each reported as `attendance.status_changed` with cause `reversal`)' }),
  }).meta({ id: 'ReceiptReversedEventData', description: 'A receipt was reversed, wholly or in part (POST /receipts/{uuid}/reverse).' }),
  'participant.pseudonymised': z.object({
    participant: id('the child; its names, birth date and contact data are gone'),
    account: id('its family account, when it has one').optional(),
    accountPseudonymised: z.boolean().meta({ description: 'true when the account lost its own names and contact data too (no living child left)' }),
  }).meta({ id: 'ParticipantPseudonymisedEventData', description: 'The retention period ran out (D2 `retentionWeeks`, D9): the child was pseudonymised.' }),
} as const;

export type EventPayloads = { [K in keyof typeof EVENT_PAYLOADS]: z.input<(typeof EVENT_PAYLOADS)[K]> };
