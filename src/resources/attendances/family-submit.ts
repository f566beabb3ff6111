import type { AnswerValue } from '../../domain/answers.js';
import { NOT_COUNTED_FOR_LIMIT } from '../../domain/edition-phases.js';
import { conflict, invalid, violation, type Violation } from '../../domain/errors.js';
import { sameChild, wishProblems, type UploadState } from '../../domain/family-applications.js';
import { confirmationExpiry, confirmationLink, needsConsent, waitingState, CONFIRMATION_HOURS } from '../../domain/family-confirmation.js';
import { EXPIRED_REASON, existingApplicationVerdict } from '../../domain/family-expiry.js';
import { deleteFilesOf, setAnswerFiles, uploadsOf } from '../../engines/answer-files/index.js';
import { lockFamily } from '../../engines/families/index.js';
import { lockOffers, participantLockKey, reorderList, statusChanged } from '../../engines/participant-list/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { newUuid, parseId } from '../../platform/http/ids.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { familyConfirmationMail } from '../../platform/mail/templates/de.js';
import type { StoredAnswer } from './entity.js';
import { applyFamilyChanges, newLinkToken, queueFamilyStateMail, readWishOffers, submissionApplications, WAIT_REASONS, type WishOfferRow } from './family-store.js';
import { queueConsentMails } from './family-confirm.js';
import type { SubmitFamilyApplicationInput } from './family-schema.js';
import { readSubmission } from './list.js';
import type { AttendanceOut } from './schema.js';

// D11, issue 21 items 2-5: `POST /family-applications`, one request per family from the municipality's website.
// In one transaction, under a lock per family (its e-mail address): the family's account and children are
// found (a family is its address; a child the same child when account, first name and birth date match) or
// made; every wish passes every rule of src/domain/family-applications.ts or the whole request is refused (422,
// each violation naming `participants[i].wishes[j]...`), and a child's existing application for an offer is a
// 409 naming the wish, unless an expiry withdrew it (the family applies again: it is reused, in its place of
// `attendances_offer_participant_key`). Then the applications are written: waiting for the address's confirmation
// (`email_unconfirmed`) unless the website vouched for it, and for a guardian's consent where the child names
// another guardian; the confirmation mail goes out with them. With nothing outstanding the edition's procedure
// decides at once, as for any new application.

type Child = SubmitFamilyApplicationInput['participants'][number];
const wishPath = (i: number, j: number) => `participants[${i}].wishes[${j}]`;

export async function submitFamilyApplication(ctx: ServiceContext, input: SubmitFamilyApplicationInput): Promise<AttendanceOut[]> {
  // The router lets website tokens only (D11); the uploads a file answer names are that token's.
  if (ctx.viewer.kind !== 'website') throw new Error('family applications come with a website token');
  const token = ctx.viewer.actor.tokenId;
  assertNoDuplicates(input);
  const submission = await ctx.em.transactional(async (em) => submit(ctx, dbOf(em), input, token));
  return readSubmission(ctx, submission);
}

/** The same child twice, or one child's same offer twice: 422 (the request is malformed). */
function assertNoDuplicates(input: SubmitFamilyApplicationInput): void {
  const violations: Violation[] = [];
  input.participants.forEach((c, i) => {
    if (input.participants.slice(0, i).some((o) => sameChild(c, o))) {
      violations.push(violation(`participants[${i}]`, 'This child is named twice (same first name and date of birth); list its wishes once.', 'duplicate'));
    }
    c.wishes.forEach((w, j) => {
      if (c.wishes.slice(0, j).some((o) => o.offer === w.offer)) violations.push(violation(`${wishPath(i, j)}.offer`, 'The child wishes for this offer twice.', 'duplicate'));
    });
  });
  if (violations.length > 0) throw invalid(violations);
}

async function submit(ctx: ServiceContext, db: Executor, input: SubmitFamilyApplicationInput, token: string): Promise<string> {
  const schema = ctx.tenant.schema;
  const tx = inSchema(db, schema);
  const now = new Date();
  const email = input.account.email;
  // One family's submissions take turns: its children are matched and made once.
  await lockFamily(ctx, db, email);
  const account = await tx.selectFrom('accounts').select(['uuid', 'email']).where(sql<boolean>`lower(email) = lower(${email})`).executeTakeFirst();
  const known = account
    ? await tx.selectFrom('participants').select(['uuid', 'firstname', sql<string | null>`to_char(date_of_birth, 'YYYY-MM-DD')`.as('dateOfBirth')])
      .where('account_uuid', '=', account.uuid).where('pseudonymised_at', 'is', null).orderBy('created_at').execute()
    : [];
  const matched = input.participants.map((c) => known.find((k) => sameChild(c, k))?.uuid ?? null);
  // The children's own turn (D4 maxApplications), before any offer's lock, as every creation takes them.
  for (const p of matched.filter((m): m is string => m !== null).sort()) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${participantLockKey(ctx, p)}, 0))`.execute(db);
  }
  const existing = matched.some((m) => m !== null)
    ? await tx.selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid')
      .select(['a.uuid', 'a.participant_uuid as participant', 'a.offer_uuid as offer', 'a.status', 'a.decision_reason as decisionReason', 'o.edition_uuid as edition'])
      .where('a.participant_uuid', '=', anyOf(matched.filter((m): m is string => m !== null))).execute()
    : [];
  const offers = await readWishOffers(ctx, db, input.participants.flatMap((c) => c.wishes.map((w) => w.offer)));
  const fileIds = input.participants.flatMap((c) => c.wishes.flatMap((w) => Object.values(w.answers ?? {})))
    .filter((v): v is string => typeof v === 'string').map((v) => parseId(v)).filter((v): v is string => v !== null);
  const uploads = await uploadsOf(db, schema, fileIds);

  // Every rule of every wish (422), then the applications that exist already (409).
  const violations: Violation[] = [];
  const taken = new Set<string>();
  input.participants.forEach((c, i) => {
    const counted = new Map<string, number>();
    for (const e of existing) {
      if (e.participant === matched[i] && !(NOT_COUNTED_FOR_LIMIT as readonly string[]).includes(e.status)) counted.set(e.edition, (counted.get(e.edition) ?? 0) + 1);
    }
    c.wishes.forEach((w, j) => {
      const offer = offers.get(w.offer);
      if (!offer) {
        violations.push(violation(`${wishPath(i, j)}.offer`, `No offer with the identifier ${w.offer} exists.`, 'identifier'));
        return;
      }
      const answers = w.answers ?? {};
      const problems = wishProblems({
        offer, dateOfBirth: c.dateOfBirth, counted: counted.get(offer.editionUuid) ?? 0, now,
        answers: { questions: offer.questions, answers, questionOf: parseId, fileOf: parseId, uploads: uploads as ReadonlyMap<string, UploadState>, token, taken },
      });
      for (const p of problems) violations.push(violation(`${wishPath(i, j)}.${p.field}`, p.message, p.rule));
      for (const [key, value] of Object.entries(answers)) {
        const q = offer.questions.find((x) => x.uuid === parseId(key));
        if (q?.type === 'file' && typeof value === 'string' && parseId(value)) taken.add(parseId(value)!);
      }
      counted.set(offer.editionUuid, (counted.get(offer.editionUuid) ?? 0) + 1);
    });
  });
  if (violations.length > 0) throw invalid(violations);
  // An application withdrawn by an expiry is applied for again (reused, domain/family-expiry.ts); any other is a 409.
  const reused = new Map<string, string>();
  input.participants.forEach((c, i) => c.wishes.forEach((w, j) => {
    const clash = existing.find((e) => e.participant === matched[i] && e.offer === w.offer);
    if (!clash) return;
    if (existingApplicationVerdict(clash) === 'reuse') reused.set(`${clash.participant}:${clash.offer}`, clash.uuid);
    else throw alreadyApplied(i, j, c.firstname, clash.status);
  }));

  // The family and its children: found, or made by this submission (its expiry deletes what it made).
  const submission = newUuid();
  let accountUuid = account?.uuid ?? null;
  if (!accountUuid) {
    accountUuid = newUuid();
    const a = input.account;
    await tx.insertInto('accounts').values({ uuid: accountUuid, email, firstname: a.firstname, lastname: a.lastname, phone: a.phone ?? null, street: a.street ?? null, zip: a.zip ?? null, city: a.city ?? null }).execute();
  } else {
    await tx.updateTable('accounts').set({ modified_at: sql`now()` }).where('uuid', '=', accountUuid).execute();
  }
  const children = matched.map((m) => m ?? newUuid());
  const made = input.participants.flatMap((c, i) => (matched[i] ? [] : [{ c, uuid: children[i]! }]));
  if (made.length > 0) {
    await tx.insertInto('participants').values(made.map(({ c, uuid }) => ({
      uuid, account_uuid: accountUuid, firstname: c.firstname, lastname: c.lastname, date_of_birth: c.dateOfBirth,
    }))).execute();
  }
  const emailOutstanding = input.emailVerified !== true;
  const guardians = input.participants.flatMap((c, i) => (needsConsent(c.guardianEmail, email) ? [{ participant: children[i]!, email: c.guardianEmail! }] : []));
  await tx.insertInto('family_submissions').values({
    uuid: submission, account_uuid: accountUuid, token_uuid: token, email_verified: !emailOutstanding,
    email_confirmed_at: emailOutstanding ? null : sql`now()`, created_account: !account, created_participants: made.map((m) => m.uuid),
    guardians: JSON.stringify(guardians),
  }).execute();

  // The mail first: the offers' locks below are held only for the applications' few statements.
  if (emailOutstanding) await queueConfirmationMail(ctx, db, submission, email, input, [...offers.values()]);

  // The applications, each at the end of its list (the rest group while waiting; renumbered below).
  const locked = await lockOffers(ctx, db, [...offers.keys()]);
  const rows = input.participants.flatMap((c, i) => c.wishes.map((w, j) => {
    const offer = offers.get(w.offer)!;
    const wait = waitingState({ email: emailOutstanding, consent: guardians.some((g) => g.participant === children[i]) });
    const previous = reused.get(`${children[i]}:${offer.uuid}`);
    return { uuid: previous ?? newUuid(), again: !!previous, i, j, child: children[i]!, offer, wish: w, wait, consent: guardians.some((g) => g.participant === children[i]) };
  }));
  const t = tablesOf(schema);
  const answers = rows.map((r) => storedAnswers(r.offer, r.wish.answers ?? {}));
  // Raw: every application in one `insert … select from unnest(arrays)`. A waiting application goes to the end of
  // its list, whose last group it is in (D10; the list is numbered 1..n under the offer's lock): max + its rank.
  // One application per child and offer (spec 4.3): one withdrawn by an expiry is made again in place (its uuid
  // kept, as POST /attendances reuses one); a row that became anything else since it was read is left alone and
  // the request refused below.
  const written = await sql<{ uuid: string }>`insert into ${t('attendances')} as cur (uuid, offer_uuid, participant_uuid, status, sorting, user_priority, all_alternate_dates,
      consent_outstanding, held_back, decision_reason, created_by_admin, fee, answers, submission_uuid)
    select v.uuid, v.offer, v.participant, v.status,
      case when v.status in ('email_unconfirmed', 'consents_outstanding')
        then (select coalesce(max(x.sorting), 0) from ${t('attendances')} x where x.offer_uuid = v.offer) + row_number() over (partition by v.offer order by v.n) end,
      v.priority, v.all_dates, v.consent, false, v.reason, false, v.fee, v.answers, ${submission}::uuid
    from unnest(${rows.map((r) => r.uuid)}::uuid[], ${rows.map((r) => r.offer.uuid)}::uuid[], ${rows.map((r) => r.child)}::uuid[],
      ${rows.map((r) => r.wait ?? 'waiting')}::text[], ${rows.map((r) => (r.wish.userPriority == null ? null : Math.max(0, r.wish.userPriority)))}::int[],
      ${rows.map((r) => r.wish.allAlternateDates ?? true)}::boolean[], ${rows.map((r) => r.consent)}::boolean[],
      ${rows.map((r) => (r.wait ? WAIT_REASONS[r.wait] : null))}::text[], ${rows.map((r) => r.offer.fee)}::int[],
      ${answers.map((a) => JSON.stringify(a))}::jsonb[], ${rows.map((_, i) => i)}::int[])
      as v(uuid, offer, participant, status, priority, all_dates, consent, reason, fee, answers, n)
    order by v.n
    on conflict (offer_uuid, participant_uuid) do update set status = excluded.status, sorting = excluded.sorting,
      user_priority = excluded.user_priority, all_alternate_dates = excluded.all_alternate_dates, consent_outstanding = excluded.consent_outstanding,
      held_back = false, decision_reason = excluded.decision_reason, created_by_admin = false, fee = excluded.fee, answers = excluded.answers,
      submission_uuid = excluded.submission_uuid, confirmed_at = null, status_changed_at = now(), modified_at = now()
      where cur.status = 'withdrawn' and cur.decision_reason = ${EXPIRED_REASON}
    returning cur.uuid`.execute(db);
  if (written.rows.length < rows.length) {
    // Applied for meanwhile (the team, between the read above and the offers' locks): a duplicate after all.
    const done = new Set(written.rows.map((r) => r.uuid));
    const r = rows.find((x) => !done.has(x.uuid))!;
    throw alreadyApplied(r.i, r.j, input.participants[r.i]!.firstname, null);
  }
  const again = rows.filter((r) => r.again);
  // The reused applications' answer files are those of the expired wish: they go (the new answers name new uploads).
  await deleteFilesOf(db, schema, again.map((r) => r.uuid));
  for (const [i, r] of rows.entries()) {
    const files = answers[i]!.filter((a) => a.type === 'file').map((a) => ({ file: String(a.answer), question: a.question }));
    if (files.length > 0) await setAnswerFiles(db, schema, r.uuid, files);
  }
  // Nothing outstanding (the website vouched for the address, no consent needed): the procedure decides now.
  const applied = await submissionApplications(db, schema, submission);
  const decide = applied.filter((a) => a.status === 'waiting');
  // Decided ones are placed by the renumbering of their lists (applyFamilyChanges); waiting ones are in place,
  // but a reused one left its old place empty: its list is renumbered.
  await applyFamilyChanges(ctx, db, locked, decide.map((row) => ({ row, to: 'decide' as const })), null);
  for (const offer of new Set(again.map((r) => r.offer.uuid))) await reorderList(ctx, db, offer);
  const edition = new Map(rows.map((r) => [r.uuid, r.offer.editionUuid]));
  const reusedIds = new Set(again.map((r) => r.uuid));
  // A new application reports `attendance.created`; a reused one `attendance.status_changed` (cause `reapplication`), as POST /attendances.
  await recordEvents(ctx, db, (decide.length > 0 ? await submissionApplications(db, schema, submission) : applied).map((a) => (reusedIds.has(a.uuid)
    ? statusChanged({ attendance: a.uuid, offer: a.offer, edition: edition.get(a.uuid)!, participant: a.participant, account: accountUuid },
      { from: 'withdrawn', to: a.status, heldBack: false, decisionReason: a.decisionReason, cause: 'reapplication' })
    : { type: 'attendance.created' as const, data: {
      attendance: a.uuid, offer: a.offer, edition: edition.get(a.uuid)!, participant: a.participant, account: accountUuid,
      status: a.status, heldBack: false, decisionReason: a.decisionReason ?? undefined, createdByAdmin: false, consentOutstanding: a.consentOutstanding,
    } })));

  if (!emailOutstanding) {
    await queueConsentMails(ctx, db, submission);
    await queueFamilyStateMail(ctx, db, submission);
  }
  return submission;
}

/** 409 naming the wish (D11): the child has an application for this offer that is not one withdrawn by an expiry. */
function alreadyApplied(i: number, j: number, firstname: string, status: string | null) {
  const which = status ? `application in state ${status}` : 'an application was made meanwhile';
  return conflict(`${wishPath(i, j)}.offer: ${firstname} already applied for this offer (${which}); nothing of this request was saved.`);
}

/** The answers as an application stores them: with the question's label and type, in question order (D10). */
function storedAnswers(offer: WishOfferRow, answers: Record<string, AnswerValue>): StoredAnswer[] {
  const out: StoredAnswer[] = [];
  for (const q of offer.questions) {
    const entry = Object.entries(answers).find(([k]) => parseId(k) === q.uuid);
    if (!entry) continue;
    out.push({ question: q.uuid, label: q.label, type: q.type, answer: q.type === 'file' ? parseId(entry[1] as string)! : entry[1] });
  }
  return out;
}

/** The double opt-in mail (D11), with a single-use link valid for 72 hours. */
async function queueConfirmationMail(ctx: ServiceContext, db: Executor, submission: string, email: string, input: SubmitFamilyApplicationInput, offers: WishOfferRow[]): Promise<void> {
  const link = newLinkToken();
  await inSchema(db, ctx.tenant.schema).insertInto('family_confirmations')
    .values({ token_hash: link.hash, kind: 'email', submission_uuid: submission, expires_at: confirmationExpiry(new Date()) }).execute();
  const names = new Map(offers.map((o) => [o.uuid, o.name]));
  await queueMail(ctx, db, {
    kind: 'family_confirmation', recipient: email,
    ...familyConfirmationMail({
      programme: ctx.tenant.name, hours: CONFIRMATION_HOURS,
      link: confirmationLink(ctx.tenant.settings.confirmationUrlTemplate, ctx.tenant.hosts[0]?.host, 'bestaetigen', link.token),
      children: input.participants.map((c: Child) => ({ firstname: c.firstname, offers: c.wishes.map((w) => ({ offerName: names.get(w.offer) ?? '' })) })),
    }),
    payload: { submission, secret: true },
  });
}
