import { notFound } from '../../domain/errors.js';
import { afterConfirmation, confirmationExpiry, confirmationLink, CONFIRMATION_HOURS } from '../../domain/family-confirmation.js';
import { lockOffers } from '../../engines/participant-list/index.js';
import { fullNameSql } from '../../engines/families/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { queueMails } from '../../platform/mail/outbox.js';
import { guardianConsentMail } from '../../platform/mail/templates/de.js';
import { applyFamilyChanges, newLinkToken, queueFamilyStateMail, submissionApplications, useLink, type FamilyChange } from './family-store.js';
import { readSubmission } from './list.js';
import type { AttendanceOut } from './schema.js';

// D11, issue 21 items 4 and 5: the family confirms its address (`POST /family-applications/confirm`) and a
// guardian consents (`POST /family-applications/consent`), each with the single-use token of its mail. A token
// that is unknown, expired or used gets one answer (404), so tokens cannot be probed. Confirming completes the
// wait of `await_email`, consenting that of `await_consents` (domain/family-confirmation.ts); an application
// with nothing outstanding any more is decided by the edition's procedure at that moment, so first come first
// served follows the order of confirmation. The offers are locked first, as for every list write.

const linkNotFound = () => notFound('This link is unknown, expired or was used already. Apply again if the application expired.');

export async function confirmFamilyEmail(ctx: ServiceContext, token: string): Promise<AttendanceOut[]> {
  const submission = await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const link = await useLink(db, ctx.tenant.schema, 'email', token);
    if (!link) throw linkNotFound();
    await inSchema(db, ctx.tenant.schema).updateTable('family_submissions').set({ email_confirmed_at: sql`now()` })
      .where('uuid', '=', link.submission).execute();
    // Now that the address is proven, the guardians are asked (not before: no mail to any address a stranger typed).
    // Before the offers' locks, which `complete` takes and holds to the commit.
    await queueConsentMails(ctx, db, link.submission);
    await complete(ctx, db, link.submission, null, 'email');
    await queueFamilyStateMail(ctx, db, link.submission);
    return link.submission;
  });
  return answer(ctx, submission, null);
}

export async function giveConsent(ctx: ServiceContext, token: string): Promise<AttendanceOut[]> {
  const done = await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const link = await useLink(db, ctx.tenant.schema, 'consent', token);
    if (!link?.participant) throw linkNotFound();
    const decided = await complete(ctx, db, link.submission, link.participant, 'consent');
    // The family hears where it stands once its address is confirmed and this consent made a decision.
    const submission = await inSchema(db, ctx.tenant.schema).selectFrom('family_submissions').select('email_confirmed_at').where('uuid', '=', link.submission).executeTakeFirst();
    if (decided && submission?.email_confirmed_at) await queueFamilyStateMail(ctx, db, link.submission);
    return link;
  });
  return answer(ctx, done.submission, done.participant);
}

/** Applies the confirmation to the submission's (child's) applications; whether any was decided. */
async function complete(ctx: ServiceContext, db: Executor, submission: string, participant: string | null, what: 'email' | 'consent'): Promise<boolean> {
  const before = await submissionApplications(db, ctx.tenant.schema, submission, participant);
  const offers = await lockOffers(ctx, db, before.map((a) => a.offer));
  // Read again under the locks: the team may have changed one meanwhile.
  const rows = await submissionApplications(db, ctx.tenant.schema, submission, participant);
  const changes: FamilyChange[] = [];
  for (const row of rows) {
    const next = afterConfirmation(row, what);
    if (next.next === 'decide') changes.push({ row, to: 'decide' });
    else if (next.next === 'wait') changes.push({ row, to: next.status, consentOutstanding: next.consentOutstanding });
  }
  await applyFamilyChanges(ctx, db, offers, changes, what === 'email' ? 'await_email' : 'await_consents');
  return changes.some((c) => c.to === 'decide');
}

async function answer(ctx: ServiceContext, submission: string, participant: string | null): Promise<AttendanceOut[]> {
  return readSubmission(ctx, submission, participant);
}

/**
 * One consent mail per guardian the submission names (D11), each with its own single-use link, for the child's
 * applications still waiting for it; the guardians' addresses are then forgotten by the submission.
 */
export async function queueConsentMails(ctx: ServiceContext, db: Executor, submission: string): Promise<void> {
  const tx = inSchema(db, ctx.tenant.schema);
  const s = await tx.selectFrom('family_submissions as s').leftJoin('accounts as acc', 'acc.uuid', 's.account_uuid')
    .select(['s.guardians', fullNameSql('acc').as('applicant'), 'acc.email'])
    .where('s.uuid', '=', submission).executeTakeFirst();
  const guardians = (s?.guardians ?? []) as { participant: string; email: string }[];
  if (guardians.length === 0) return;
  const waiting = await tx.selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid').innerJoin('participants as p', 'p.uuid', 'a.participant_uuid')
    .select(['a.participant_uuid as participant', 'o.name as offer', 'p.firstname', 'p.lastname'])
    .where('a.submission_uuid', '=', submission).where('a.consent_outstanding', '=', true)
    .where('a.participant_uuid', '=', anyOf(guardians.map((g) => g.participant))).orderBy('a.seq').execute();
  const mails = [];
  for (const g of guardians) {
    const offers = waiting.filter((w) => w.participant === g.participant);
    if (offers.length === 0) continue;
    const link = newLinkToken();
    await tx.insertInto('family_confirmations')
      .values({ token_hash: link.hash, kind: 'consent', submission_uuid: submission, participant_uuid: g.participant, expires_at: confirmationExpiry(new Date()) }).execute();
    mails.push({
      kind: 'guardian_consent', recipient: g.email,
      ...guardianConsentMail({
        programme: ctx.tenant.name, hours: CONFIRMATION_HOURS, offers: offers.map((o) => o.offer),
        child: [offers[0]!.firstname, offers[0]!.lastname].filter(Boolean).join(' '), applicant: s?.applicant ?? s?.email ?? 'Eine Familie',
        link: confirmationLink(ctx.tenant.settings.consentUrlTemplate, ctx.tenant.hosts[0]?.host, 'einwilligen', link.token),
      }),
      payload: { submission, participant: g.participant, secret: true },
    });
  }
  await queueMails(ctx, db, mails);
  await tx.updateTable('family_submissions').set({ guardians: '[]' }).where('uuid', '=', submission).execute();
}
