import type { AttendanceState } from '../../domain/attendance-states.js';
import type { ServiceContext } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { queueMail, type QueuedMail } from '../../platform/mail/outbox.js';
import { applicationStateMail } from '../../platform/mail/templates/de.js';
import { participantFieldSql } from '../families/index.js';

// ---- e-mail to the family (D9: an outbox row in the same transaction) -------------------------------

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

/** The family's e-mail about an application's state (D9; its text: platform/mail/templates/de.ts), as the outbox stores it. */
export function decisionMail(m: {
  attendance: string; status: AttendanceState; offer: string; offerName: string; firstname: string | null; email: string; cause: string;
}): QueuedMail {
  return {
    kind: `attendance_${m.status}`,
    recipient: m.email,
    ...applicationStateMail({ status: m.status, offerName: m.offerName, firstname: m.firstname }),
    payload: { attendance: m.attendance, offer: m.offer, status: m.status, cause: m.cause },
  };
}

