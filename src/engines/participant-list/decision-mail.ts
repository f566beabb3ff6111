import type { AttendanceState } from '../../domain/attendance-states.js';
import type { ServiceContext } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { queueMail, type QueuedMail } from '../../platform/mail/outbox.js';
import { participantFieldSql } from '../families/index.js';

// ---- e-mail to the family (D9: an outbox row in the same transaction) -------------------------------

const SUBJECTS: Record<AttendanceState, string> = {
  waiting: 'Anmeldung eingegangen',
  confirmed: 'Platzzusage',
  waitlisted: 'Warteliste',
  rejected: 'Absage',
  withdrawn: 'Abmeldung',
  unfulfilled: 'Leider kein Platz',
  participated: 'Teilnahme',
  noshow: 'Nicht erschienen',
  email_unconfirmed: 'Bitte E-Mail-Adresse bestätigen',
  consents_outstanding: 'Einverständnis fehlt',
};

function bodyFor(status: AttendanceState, child: string, offer: string): string {
  const lines: Record<AttendanceState, string> = {
    waiting: `die Anmeldung von ${child} für „${offer}“ ist eingegangen. Über die Plätze wird noch entschieden.`,
    confirmed: `${child} hat einen Platz für „${offer}“ bekommen.`,
    waitlisted: `${child} steht für „${offer}“ auf der Warteliste. Wird ein Platz frei, melden wir uns.`,
    rejected: `für „${offer}“ können wir ${child} leider keinen Platz geben.`,
    withdrawn: `die Anmeldung von ${child} für „${offer}“ wurde zurückgezogen.`,
    unfulfilled: `bei der Platzvergabe für „${offer}“ hat ${child} leider keinen Platz bekommen.`,
    participated: `schön, dass ${child} an „${offer}“ teilgenommen hat.`,
    noshow: `${child} ist zu „${offer}“ nicht erschienen.`,
    email_unconfirmed: `bitte bestätigen Sie Ihre E-Mail-Adresse für die Anmeldung von ${child} zu „${offer}“.`,
    consents_outstanding: `für die Anmeldung von ${child} zu „${offer}“ fehlt noch ein Einverständnis.`,
  };
  return `Guten Tag,\n\n${lines[status]}\n\nIhr Ferienprogramm-Team\n`;
}

/**
 * Queues the family's e-mail about the application's current state: to the account's address, else the
 * participant's own. Returns false when there is no address to write to.
 */
export async function queueDecisionMail(ctx: ServiceContext, db: Executor, attendanceUuid: string, cause: string): Promise<boolean> {
  const r = await inSchema(db, ctx.tenant.schema).selectFrom('attendances as a')
    .innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
    .innerJoin('participants as p', 'p.uuid', 'a.participant_uuid')
    .leftJoin('accounts as acc', 'acc.uuid', 'p.account_uuid')
    .select([
      'a.status', 'o.name as offer', 'o.uuid as offerUuid', participantFieldSql('p', 'firstname').as('firstname'),
      sql<string | null>`coalesce(acc.email, p.email)`.as('email'),
    ])
    .where('a.uuid', '=', attendanceUuid)
    .$narrowType<{ status: AttendanceState }>()
    .executeTakeFirst();
  if (!r?.email) return false;
  await queueMail(ctx, db, decisionMail({ attendance: attendanceUuid, status: r.status, offer: r.offerUuid, offerName: r.offer, firstname: r.firstname, email: r.email, cause }));
  return true;
}

/** The family's e-mail about an application's state (German, D9), as the outbox stores it. */
export function decisionMail(m: {
  attendance: string; status: AttendanceState; offer: string; offerName: string; firstname: string | null; email: string; cause: string;
}): QueuedMail {
  return {
    kind: `attendance_${m.status}`,
    recipient: m.email,
    subject: `${SUBJECTS[m.status]}: ${m.offerName}`,
    body: bodyFor(m.status, m.firstname ?? 'Ihr Kind', m.offerName),
    payload: { attendance: m.attendance, offer: m.offer, status: m.status, cause: m.cause },
  };
}

