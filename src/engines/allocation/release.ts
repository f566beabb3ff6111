import type { AttendanceState } from '../../domain/attendance-states.js';
import type { ReleasedDecision } from '../../domain/decision-mail.js';
import { composeDecisionMails } from '../../platform/mail/templates/de.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { queueMails } from '../../platform/mail/outbox.js';
import { syncCharges } from '../ledger/index.js';
import { lockEditionOffers } from './store.js';
import { statusChanged } from '../participant-list/index.js';
import { recordEvents } from '../../platform/events/events.js';

// The commit (D7), the work of the `edition-commit` job: every held-back decision of the edition becomes
// final in one transaction: `heldBack` false, the fees of confirmed places due (D8 charges posted by
// `syncCharges`), and with `notify` one e-mail per family listing its children's decisions, queued in the
// outbox in the same transaction (D9). Idempotent: run again, it finds nothing held back and does nothing,
// so a family is never told twice.

/**
 * Releases the edition's held-back decisions; returns the applications released. Call with the edition locked.
 * `decided`: applications the commit job's own draw just decided, written final already (draw.ts `final`):
 * they are charged and told like the released ones.
 */
export async function releaseHeldBack(
  ctx: ServiceContext, db: Executor, edition: { uuid: string; name: string }, notify: boolean, decided: readonly string[] = [],
): Promise<string[]> {
  await lockEditionOffers(ctx, db, edition.uuid);
  const t = tablesOf(ctx.tenant.schema);
  // Raw: the edition's held-back decisions released in one `update … from … returning` (thousands of rows).
  const released = await sql<{ uuid: string; offer: string; participant: string; account: string | null; status: AttendanceState; reason: string | null }>`
    update ${t('attendances')} a set held_back = false, modified_at = now()
    from ${t('offers')} o, ${t('participants')} p
    where o.uuid = a.offer_uuid and o.edition_uuid = ${edition.uuid}::uuid and a.held_back and p.uuid = a.participant_uuid
    returning a.uuid, a.offer_uuid as offer, a.participant_uuid as participant, p.account_uuid as account, a.status,
      a.decision_reason as reason`.execute(db);
  const ids = [...new Set([...decided, ...released.rows.map((r) => r.uuid)])];
  if (ids.length === 0) return [];
  // Issue 14: each released decision (from = to, now final) and the commit itself, in one statement.
  await recordEvents(ctx, db, [
    ...released.rows.map((r) => statusChanged(
      { attendance: r.uuid, offer: r.offer, edition: edition.uuid, participant: r.participant, account: r.account },
      { from: r.status, to: r.status, heldBack: false, decisionReason: r.reason, cause: 'commit' },
    )),
    { type: 'edition.committed', data: { edition: edition.uuid, released: ids.length, notify } },
  ]);
  // D8: a decision that became final with a confirmed place is charged its fee.
  await syncCharges(db, ctx.tenant.schema, ids);
  if (notify) {
    const mails = composeDecisionMails(edition.name, await loadReleased(ctx, db, ids));
    await queueMails(ctx, db, mails.map((m) => ({
      kind: 'edition_decisions', recipient: m.recipient, subject: m.subject, body: m.body,
      payload: { edition: edition.uuid, attendances: m.attendanceIds, cause: 'commit' },
    })));
  }
  ctx.log.info({ edition: edition.uuid, released: ids.length, notify }, 'held-back decisions committed');
  return ids;
}

/** The released applications as the family e-mail needs them (D10: the account's address, else the child's own). */
async function loadReleased(ctx: ServiceContext, db: Executor, ids: string[]): Promise<ReleasedDecision[]> {
  const t = tablesOf(ctx.tenant.schema);
  // Raw: thousands of released applications with their families, as the pure mail composer takes them.
  const res = await sql<ReleasedDecision>`
    select a.uuid as "attendanceId", coalesce(acc.uuid, p.uuid) as "familyId", coalesce(acc.email, p.email) as recipient,
      p.uuid as "participantId", case when p.pseudonymised_at is null then p.firstname end as firstname,
      o.name as "offerName", a.status, a.fee
    from ${t('attendances')} a
    join ${t('offers')} o on o.uuid = a.offer_uuid
    join ${t('participants')} p on p.uuid = a.participant_uuid
    left join ${t('accounts')} acc on acc.uuid = p.account_uuid
    where a.uuid = any(${ids}::uuid[])`.execute(db);
  return res.rows;
}
