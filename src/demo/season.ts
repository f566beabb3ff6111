import { slugify } from '../domain/alias.js';
import type { ServiceContext } from '../platform/context.js';
import { sql } from '../platform/db/sql.js';
import { tenantDb } from '../platform/db/tenant.js';
import { QUEUES, type JobSender } from '../platform/jobs/queue.js';
import type { TenantJobData } from '../platform/jobs/queue.js';
import { allocateEditionInput, commitEditionInput } from '../resources/editions/schema.js';
import { runAllocationJob, runCommitJob } from '../engines/allocation/index.js';
import { allocateEdition, commitEdition } from '../resources/editions/allocation.js';
import { createAttendanceInput, transitionAttendanceInput, updateAttendanceInput } from '../resources/attendances/schema.js';
import { createAttendance, transitionAttendance, updateAttendance } from '../resources/attendances/service.js';
import { createReceiptInput, reverseReceiptInput } from '../resources/receipts/schema.js';
import { createReceipt } from '../resources/receipts/service.js';
import { reverseReceipt } from '../resources/receipts/reverse.js';
import { OFFERS, SUMMER_OUTCOMES, AUTUMN_SEED, type SummerOutcome } from './content.js';
import { websiteFamilies } from './website.js';

// The demo's season (D1 `demo`): what families and the team did with the programme, made through the same
// services the API calls, so every list of the demo answers something:
// - summer (first come first served): each child applied for three offers; the applications end up in every
//   state a client can reach (confirmed, waitlisted, waiting, rejected, withdrawn, unfulfilled,
//   participated, noshow);
// - autumn (by lot): the children applied with priorities, the lot was drawn with a fixed seed and its
//   decisions committed (no e-mails), so fees became due;
// - money: families paid (receipts, one with a discount), and one receipt was reversed.
// - the website (issue 21): families who applied themselves, one not confirmed yet, one waiting for a guardian's
//   consent, one file answer (website.ts).

/** `website`: applications families made themselves through the website (issue 21, website.ts). */
export type SeasonCounts = { attendances: number; allocations: number; receipts: number; reversals: number; website: number };

type Child = { uuid: string; account: string };

/** The jobs the services ask for, run at once in the seeding transaction (no worker needed for the demo). */
function inlineJobs(): { sender: JobSender; sent: { name: string; data: TenantJobData }[] } {
  const sent: { name: string; data: TenantJobData }[] = [];
  return { sent, sender: { send: async (name, data) => void sent.push({ name, data }) } };
}

async function children(ctx: ServiceContext): Promise<Child[]> {
  return tenantDb(ctx).selectFrom('participants as p').innerJoin('accounts as a', 'a.uuid', 'p.account_uuid')
    .select(['p.uuid', 'p.account_uuid as account'])
    .orderBy('a.email').orderBy('p.date_of_birth').orderBy('p.uuid')
    .$narrowType<Child>().execute();
}

/** The first transition from the state it was applied in, by outcome. */
const PATH: Record<SummerOutcome, { apply: 'confirmed' | 'waitlisted' | 'waiting'; then?: string }> = {
  confirmed: { apply: 'confirmed' },
  waitlisted: { apply: 'waitlisted' },
  waiting: { apply: 'waiting' },
  rejected: { apply: 'waiting', then: 'reject' },
  withdrawn: { apply: 'confirmed', then: 'withdraw' },
  participated: { apply: 'confirmed', then: 'participated' },
  unfulfilled: { apply: 'waiting', then: 'unfulfill' },
  noshow: { apply: 'confirmed', then: 'noshow' },
};

async function summer(ctx: ServiceContext, offers: Map<string, string>, kids: Child[], counts: SeasonCounts) {
  const open = OFFERS.filter((o) => (o.state ?? 'published') === 'published' && !o.open);
  const places = new Map(open.map((o) => [offers.get(slugify(o.name))!, o.max ?? Infinity]));
  const list = [...places.keys()];
  const confirmed = new Map<string, number>();
  let n = 0;
  const byAccount = new Map<string, string[]>();
  for (const [c, child] of kids.entries()) {
    for (let k = 0; k < 3; k++) {
      const offer = list[(c * 5 + k * 7) % list.length];
      let outcome = SUMMER_OUTCOMES[n++ % SUMMER_OUTCOMES.length];
      let path = PATH[outcome];
      if (path.apply === 'confirmed' && (confirmed.get(offer) ?? 0) >= places.get(offer)!) {
        outcome = 'waitlisted';
        path = PATH.waitlisted;
      }
      const a = await createAttendance(ctx, createAttendanceInput.parse({ offer, participant: child.uuid, status: path.apply, notify: false }));
      if (path.apply === 'confirmed') confirmed.set(offer, (confirmed.get(offer) ?? 0) + 1);
      if (path.then) await transitionAttendance(ctx, transitionAttendanceInput.parse({ uuid: a.uuid, transition: path.then, notify: false }));
      if (outcome === 'confirmed') byAccount.set(child.account, [...(byAccount.get(child.account) ?? []), a.uuid]);
      counts.attendances++;
    }
  }
  return byAccount;
}

async function autumn(ctx: ServiceContext, edition: string, offers: string[], kids: Child[], counts: SeasonCounts) {
  // Everyone wants the same three offers; the first choice gets priority 1.
  for (const [c, child] of kids.entries()) {
    for (let k = 0; k < offers.length; k++) {
      if ((c + k) % 4 === 3) continue; // not every child wants everything
      const a = await createAttendance(ctx, createAttendanceInput.parse({ offer: offers[(c + k) % offers.length], participant: child.uuid, status: 'waiting', notify: false }));
      await updateAttendance(ctx, updateAttendanceInput.parse({ uuid: a.uuid, userPriority: k + 1 }));
      counts.attendances++;
    }
  }
  const jobs = inlineJobs();
  const withJobs: ServiceContext = { ...ctx, jobs: jobs.sender };
  await allocateEdition(withJobs, allocateEditionInput.parse({ uuid: edition, seed: AUTUMN_SEED, waitlist: true }));
  await commitEdition(withJobs, commitEditionInput.parse({ uuid: edition, notify: false }));
  for (const job of jobs.sent) {
    if (job.name === QUEUES.editionAllocate) await runAllocationJob(ctx, job.data);
    else if (job.name === QUEUES.editionCommit) await runCommitJob(ctx, { ...job.data, notify: false });
    else if (job.name === QUEUES.mailSend) continue; // mail stays in the outbox; the workers' sweep sends it
    else throw new Error(`demo: unexpected job ${job.name}`);
  }
  counts.allocations++;
}

async function money(ctx: ServiceContext, byAccount: Map<string, string[]>, counts: SeasonCounts) {
  // Fees are due for confirmed, committed applications with a fee (D10 `payable`).
  const due = await tenantDb(ctx).selectFrom('attendances').select(['uuid', 'fee'])
    .where('status', '=', 'confirmed').where('held_back', '=', false).where('fee', '>', 0)
    .$narrowType<{ fee: number }>().execute();
  const fees = new Map(due.map((r) => [r.uuid, r.fee]));
  const families = [...byAccount.values()].map((ids) => ids.filter((id) => fees.has(id))).filter((ids) => ids.length > 0);
  const receipts: string[] = [];
  for (const [i, ids] of families.slice(0, 6).entries()) {
    const items = ids.map((attendance, j) => (i === 1 && j === 0
      ? { attendance, amount: Math.floor(fees.get(attendance)! / 2), text: 'Geschwisterermäßigung 50 %' }
      : { attendance }));
    receipts.push((await createReceipt(ctx, createReceiptInput.parse({ items }))).uuid);
    counts.receipts++;
  }
  // A family paid twice by mistake: the receipt is reversed (the applications are due again).
  if (receipts.length > 2) {
    await reverseReceipt(ctx, reverseReceiptInput.parse({ uuid: receipts[2], notify: false }));
    counts.reversals++;
  }
}

/** The season, once: only while the tenant has no application at all. */
export async function season(ctx: ServiceContext, refs: { summerOffers: Map<string, string>; autumnEdition: string; autumnOffers: string[] }): Promise<SeasonCounts> {
  const counts: SeasonCounts = { attendances: 0, allocations: 0, receipts: 0, reversals: 0, website: 0 };
  const any = await tenantDb(ctx).selectNoFrom((eb) => eb.exists(eb.selectFrom('attendances').select(sql`1`.as('one'))).as('any')).executeTakeFirst();
  if (any?.any) return counts;
  const kids = await children(ctx);
  if (kids.length === 0) return counts;
  const byAccount = await summer(ctx, refs.summerOffers, kids, counts);
  await autumn(ctx, refs.autumnEdition, refs.autumnOffers, kids, counts);
  await money(ctx, byAccount, counts);
  counts.website = await websiteFamilies(ctx);
  return counts;
}
