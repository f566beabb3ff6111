import { composeDecisionMails, type ReleasedDecision } from '../../domain/decision-mail.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, type Executor } from '../../platform/db/sql.js';
import { queueMails } from '../../platform/mail/outbox.js';
import { syncCharges } from '../bookings/charges.js';
import { lockEditionOffers, table } from './store.js';

// The commit (D7), the work of the `edition-commit` job: every held-back decision of the edition becomes
// final in one transaction: `heldBack` false, the fees of confirmed places due (D8 charges posted by
// `syncCharges`), and with `notify` one e-mail per family listing its children's decisions, queued in the
// outbox in the same transaction (D9). Idempotent: run again, it finds nothing held back and does nothing,
// so a family is never told twice.

/** Releases the edition's held-back decisions; returns the applications released. Call with the edition locked. */
export async function releaseHeldBack(
  ctx: ServiceContext, db: Executor, edition: { uuid: string; name: string }, notify: boolean,
): Promise<string[]> {
  await lockEditionOffers(ctx, db, edition.uuid);
  // One statement releases them and returns what the family e-mails need (D10: the account's address, else
  // the child's own), so the 20,000 rows of a large lot are not read a second time.
  const released = await sql<ReleasedDecision & { uuid: string }>`
    update ${table(ctx, 'attendances')} a set held_back = false, modified_at = now()
    from ${table(ctx, 'offers')} o, ${table(ctx, 'participants')} p
    left join ${table(ctx, 'accounts')} acc on acc.uuid = p.account_uuid
    where o.uuid = a.offer_uuid and o.edition_uuid = ${edition.uuid}::uuid and a.held_back and p.uuid = a.participant_uuid
    returning a.uuid, a.uuid as "attendanceId", coalesce(acc.uuid, p.uuid) as "familyId", coalesce(acc.email, p.email) as recipient,
      p.uuid as "participantId", case when p.pseudonymised_at is null then p.firstname end as firstname,
      o.name as "offerName", a.status, a.fee`.execute(db);
  const ids = released.rows.map((r) => r.uuid);
  if (ids.length === 0) return [];
  // D8: a decision that became final with a confirmed place is charged its fee.
  await syncCharges(db, ctx.tenant.schema, ids);
  if (notify) {
    const mails = composeDecisionMails(edition.name, released.rows.map(({ uuid: _, ...r }) => r));
    await queueMails(ctx, db, mails.map((m) => ({
      kind: 'edition_decisions', recipient: m.recipient, subject: m.subject, body: m.body,
      payload: { edition: edition.uuid, attendances: m.attendanceIds, cause: 'commit' },
    })));
  }
  ctx.log.info({ edition: edition.uuid, released: ids.length, notify }, 'held-back decisions committed');
  return ids;
}
