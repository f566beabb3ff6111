import { DateTime } from 'luxon';
import { slugify } from '../domain/alias.js';
import type { ServiceContext } from '../platform/context.js';
import { systemViewer } from '../platform/auth/viewer.js';
import { dbOf } from '../platform/context.js';
import type { Orm } from '../platform/db/orm.js';
import { executorOf } from '../platform/db/orm.js';
import { sql, tablesOf, type TenantTable } from '../platform/db/sql.js';
import { tenantDb } from '../platform/db/tenant.js';
import { ZONE } from '../platform/http/dates.js';
import { createLogger, type Logger } from '../platform/logging/logger.js';
import { loadTenants } from '../platform/tenancy/registry.js';
import type { Tenant } from '../platform/tenancy/tenant.js';
import { createAccountInput } from '../resources/accounts/schema.js';
import { createAccount } from '../resources/accounts/service.js';
import { createCategoryInput } from '../resources/categories/schema.js';
import { createCategory } from '../resources/categories/service.js';
import { createEditionInput } from '../resources/editions/schema.js';
import { createEdition } from '../resources/editions/service.js';
import { createOfferInput, transitionOfferInput } from '../resources/offers/schema.js';
import { createOffer } from '../resources/offers/service.js';
import { parsedFinalJson } from '../platform/http/final-json.js';
import { transitionOffer } from '../resources/offers/workflow.js';
import { createOrganiserInput } from '../resources/organisers/schema.js';
import { createOrganiser } from '../resources/organisers/service.js';
import { createParticipantInput } from '../resources/participants/schema.js';
import { createParticipant } from '../resources/participants/service.js';
import {
  AUTUMN_EDITION, AUTUMN_OFFERS, CATEGORIES, CITY, FAMILIES, OFFERS, ORGANISERS, PLACES, ZIP, type CategoryKey, type DemoOffer, type DemoState,
  type DemoWhen,
} from './content.js';
import { season, type SeasonCounts } from './season.js';

// `cli demo` and the first `npm start` (D1): the demo municipality "Musterstadt" with its summer programme
// 2027 (content.ts). Every record is made by the resources' services with input parsed by the API's own
// zod schemas, as an admin, so the demo obeys the same rules as a client of the API would.
//
// Idempotent by natural keys: categories, organisers, the edition and offers by alias, accounts by e-mail
// (ignoring case). A record whose key exists already is skipped (offers keep the state they are in, and an
// existing account gets no further children), so a second run adds nothing and returns zero counts.
// Everything runs in one transaction under an advisory lock: two processes starting at once cannot
// seed twice, and a failure leaves the tenant as it was.

export type DemoCounts = {
  categories: number; organisers: number; editions: number; offers: number; accounts: number; participants: number;
} & SeasonCounts;

export const DEMO_EDITION = { name: 'Ferienprogramm 2027', alias: 'ferienprogramm-2027' } as const;
export const DEMO_MEDIA_BASE = 'https://images.musterstadt.example/ferien/';

/** The demo is written by the service itself (it never authenticates over HTTP): the system viewer. */
const DEMO_VIEWER = systemViewer('demo');

const silent = createLogger('silent');

/** `2027-07-05`, `09:00` in Berlin → ISO timestamp with the offset of that day. */
function berlin(day: string, time: string): string {
  return DateTime.fromISO(`${day}T${time}`, { zone: ZONE }).toISO({ suppressMilliseconds: true })!;
}

function datesOf(when: DemoWhen): { begin: string; end: string; recurrence?: string }[] {
  switch (when.kind) {
    case 'once': return [{ begin: berlin(when.day, when.from), end: berlin(when.day, when.to) }];
    case 'camp': return [{ begin: berlin(when.day, when.from), end: berlin(when.lastDay, when.to) }];
    case 'days': return when.days.map((d) => ({ begin: berlin(d, when.from), end: berlin(d, when.to) }));
    case 'weekly': return [{ begin: berlin(when.day, when.from), end: berlin(when.day, when.to), recurrence: when.rule }];
  }
}

function firstDay(when: DemoWhen): string {
  return when.kind === 'days' ? when.days[0] : when.day;
}

/**
 * The edition's phases (D4). `show_offers` runs from autumn 2026 (or today, if earlier) to the end of the
 * summer of 2027, and on for a year from today when the demo is seeded later, so a fresh demo always shows
 * its offers.
 */
function editionTasks(now: DateTime) {
  const showFrom = DateTime.min(DateTime.fromISO('2026-10-01T00:00', { zone: ZONE }), now.setZone(ZONE).startOf('day'));
  const showUntil = DateTime.max(DateTime.fromISO('2027-09-30T23:59:59', { zone: ZONE }), now.setZone(ZONE).plus({ years: 1 }).endOf('day'));
  const iso = (d: DateTime) => d.toISO({ suppressMilliseconds: true })!;
  return [
    { type: 'holiday', title: 'Sommerferien', begin: berlin('2027-07-05', '00:00'), end: berlin('2027-08-14', '23:59') },
    { type: 'host_editing_stage', title: 'Veranstalter tragen Angebote ein', begin: berlin('2027-01-11', '00:00'), end: berlin('2027-03-31', '23:59') },
    { type: 'show_offers', title: 'Angebote online', begin: iso(showFrom), end: iso(showUntil.startOf('second')) },
    // Running from today at the latest, so families can apply through the website in the demo (issue 21).
    { type: 'application_system', title: 'Anmeldung (Windhundverfahren)', begin: iso(DateTime.min(DateTime.fromISO('2027-05-03T08:00', { zone: ZONE }), now.setZone(ZONE).startOf('day'))), end: berlin('2027-08-13', '18:00'), applicationSystem: 'firstcome', maxApplications: 10 },
    { type: 'pay_days', title: 'Zahlungsfrist', begin: berlin('2027-06-01', '00:00'), end: berlin('2027-06-30', '23:59') },
    { type: 'publish_lists', title: 'Teilnehmerlisten für Veranstalter', begin: berlin('2027-06-28', '00:00'), end: berlin('2027-08-14', '23:59') },
  ];
}

/** The autumn edition: allocated by lot (D7), offers shown from today. */
function autumnTasks(now: DateTime) {
  const showUntil = DateTime.max(DateTime.fromISO('2027-10-31T23:59:59', { zone: ZONE }), now.setZone(ZONE).plus({ years: 1 }).endOf('day'));
  const iso = (d: DateTime) => d.toISO({ suppressMilliseconds: true })!;
  return [
    { type: 'holiday', title: 'Herbstferien', begin: berlin('2027-10-11', '00:00'), end: berlin('2027-10-23', '23:59') },
    { type: 'show_offers', title: 'Angebote online', begin: iso(now.setZone(ZONE).startOf('day')), end: iso(showUntil.startOf('second')) },
    { type: 'allocation', title: 'Verlosung der Plätze', begin: berlin('2027-09-01', '00:00'), end: berlin('2027-09-03', '23:59') },
  ];
}

function descriptionOf(o: DemoOffer): string {
  const lines = [o.about, '', '**Das erwartet dich:**', '', ...o.highlights.map((h) => `- ${h}`)];
  if (o.open) lines.push('', '_Ohne Anmeldung: einfach vorbeikommen._');
  return lines.join('\n');
}

const DEFAULT_BRING: Partial<Record<CategoryKey, string>> = {
  sport: 'Sportkleidung, Hallenschuhe und Trinkflasche',
  natur: 'Wetterfeste Kleidung, feste Schuhe und Trinkflasche',
  kochen: 'Schürze und eine Dose für Reste',
  kreativ: 'Kleidung, die schmutzig werden darf',
};

function offerBody(o: DemoOffer, refs: { edition: string; hosts: string[]; categories: string[] }) {
  const alias = slugify(o.name);
  const place = PLACES[o.place];
  const dates = datesOf(o.when);
  const media = Array.from({ length: o.images ?? 1 }, (_, i) => `${DEMO_MEDIA_BASE}${alias}${i === 0 ? '' : `-${i + 1}`}.jpg`);
  const deadline = DateTime.fromISO(`${firstDay(o.when)}T12:00`, { zone: ZONE }).minus({ days: 7 });
  const host = ORGANISERS[o.hosts[0]];
  return {
    name: o.name,
    edition: refs.edition,
    hosts: refs.hosts,
    categories: refs.categories,
    teaser: o.teaser,
    description: descriptionOf(o),
    dates,
    fee: o.fee,
    minAge: o.ages[0],
    maxAge: o.ages[1],
    minParticipants: o.min ?? null,
    maxParticipants: o.max ?? null,
    requiresApplication: !o.open,
    onlineApplication: !o.open,
    applicationDeadline: o.open ? null : deadline.toISO({ suppressMilliseconds: true }),
    applyText: o.open
      ? 'Keine Anmeldung nötig.'
      : 'Anmeldung online im Ferienprogramm. Die Plätze werden in der Reihenfolge der Anmeldungen vergeben.',
    meetingPoint: place.point,
    meetingAddress: place.address,
    meetingLat: place.lat,
    meetingLng: place.lng,
    bring: o.bring ?? DEFAULT_BRING[o.categories[0]] ?? 'Trinkflasche und einen kleinen Snack',
    wheelchairAccessible: place.wheelchair,
    media,
    publish: o.state === 'private_link' ? 'private_link' : 'public',
    comment: o.comment ?? null,
    contact: host.contact,
    applicationQuestions: [
      ...(o.question ? [{ label: o.question, type: 'yn', required: true }] : []),
      ...(o.fileQuestion ? [{ label: o.fileQuestion, type: 'file', required: false }] : []),
    ],
  };
}

/** Transitions (D5) that bring a new draft to the demo state, applied through the offer workflow. */
const TRANSITIONS: Record<DemoState, string[]> = {
  draft: [],
  completed: ['complete'],
  reviewed: ['complete', 'approve'],
  published: ['publish'],
  private_link: ['publish'],
  cancelled: ['publish', 'cancel'],
};

async function existing(ctx: ServiceContext, table: TenantTable, column: 'alias' | 'email'): Promise<Map<string, string>> {
  // Raw: one statement for whichever table and key column.
  const res = await sql<{ uuid: string; key: string }>`
    select uuid, ${sql.ref(column)} as key from ${tablesOf(ctx.tenant.schema)(table)}`.execute(dbOf(ctx.em));
  return new Map(res.rows.map((r) => [column === 'email' ? r.key.toLowerCase() : r.key, r.uuid]));
}

async function fill(ctx: ServiceContext): Promise<DemoCounts> {
  const counts = { categories: 0, organisers: 0, editions: 0, offers: 0, accounts: 0, participants: 0 };

  const categories = await existing(ctx, 'categories', 'alias');
  const categoryUuid = new Map<CategoryKey, string>();
  for (const [key, name] of Object.entries(CATEGORIES) as [CategoryKey, string][]) {
    const alias = slugify(name);
    let uuid = categories.get(alias);
    if (!uuid) {
      uuid = (await createCategory(ctx, createCategoryInput.parse({ name, alias }))).uuid;
      counts.categories++;
    }
    categoryUuid.set(key, uuid);
  }

  const organisers = await existing(ctx, 'organisers', 'alias');
  const organiserUuid: string[] = [];
  for (const o of ORGANISERS) {
    const alias = slugify(o.name);
    let uuid = organisers.get(alias);
    if (!uuid) {
      const input = createOrganiserInput.parse({
        name: o.name, alias, email: o.email, phone: o.phone, website: o.website, street: o.street, zip: ZIP, city: CITY,
        description: o.description,
      });
      uuid = (await createOrganiser(ctx, input)).uuid;
      counts.organisers++;
    }
    organiserUuid.push(uuid);
  }

  const editions = await existing(ctx, 'editions', 'alias');
  let editionUuid = editions.get(DEMO_EDITION.alias);
  if (!editionUuid) {
    const input = createEditionInput.parse({ ...DEMO_EDITION, procedure: 'firstcome', tasks: editionTasks(DateTime.now()) });
    editionUuid = (await createEdition(ctx, input)).uuid;
    counts.editions++;
  }

  let autumnUuid = editions.get(AUTUMN_EDITION.alias);
  if (!autumnUuid) {
    const input = createEditionInput.parse({ ...AUTUMN_EDITION, procedure: 'lot', tasks: autumnTasks(DateTime.now()) });
    autumnUuid = (await createEdition(ctx, input)).uuid;
    counts.editions++;
  }

  const offers = await existing(ctx, 'offers', 'alias');
  const addOffers = async (list: DemoOffer[], edition: string) => {
    for (const o of list) {
      const alias = slugify(o.name);
      if (offers.has(alias)) continue;
      const body = offerBody(o, {
        edition,
        hosts: o.hosts.map((i) => organiserUuid[i]),
        categories: o.categories.map((k) => categoryUuid.get(k)!),
      });
      // The service answers with the offer's JSON text (platform/http/final-json.ts); the seed needs its uuid.
      const created = parsedFinalJson(await createOffer(ctx, createOfferInput.parse(body))) as { uuid: string };
      for (const transition of TRANSITIONS[o.state ?? 'published']) {
        await transitionOffer(ctx, transitionOfferInput.parse({ uuid: created.uuid, transition, notify: false }));
      }
      offers.set(alias, created.uuid);
      counts.offers++;
    }
  };
  await addOffers(OFFERS, editionUuid);
  await addOffers(AUTUMN_OFFERS, autumnUuid);

  const accounts = await existing(ctx, 'accounts', 'email');
  for (const f of FAMILIES) {
    const email = `${slugify(f.firstname)}.${slugify(f.lastname)}@familie-${slugify(f.lastname)}.example`;
    if (accounts.has(email.toLowerCase())) continue;
    const account = await createAccount(ctx, createAccountInput.parse({
      email, firstname: f.firstname, lastname: f.lastname, phone: f.phone, street: f.street, zip: ZIP, city: CITY,
    }));
    counts.accounts++;
    for (const child of f.children) {
      await createParticipant(ctx, createParticipantInput.parse({
        firstname: child.firstname, lastname: f.lastname, dateOfBirth: child.dateOfBirth, account: account.uuid,
      }));
      counts.participants++;
    }
  }

  const played = await season(ctx, {
    summerOffers: offers,
    autumnEdition: autumnUuid,
    autumnOffers: AUTUMN_OFFERS.map((o) => offers.get(slugify(o.name))!),
  });
  return { ...counts, ...played };
}

async function tenantOrThrow(orm: Orm, slug: string): Promise<Tenant> {
  const tenant = (await loadTenants(executorOf(orm))).find((t) => t.slug === slug);
  if (!tenant) throw new Error(`no tenant "${slug}"`);
  return tenant;
}

/** Runs `work` in one transaction of the tenant's schema, serialised with any other seeding of that tenant. */
async function underSeedLock<T>(orm: Orm, slug: string, log: Logger, work: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  const tenant = await tenantOrThrow(orm, slug);
  return orm.em.fork({ schema: tenant.schema }).transactional(async (em) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`demo-seed:${tenant.schema}`}))`.execute(dbOf(em));
    return work({ tenant, em, viewer: DEMO_VIEWER, log });
  });
}

/** Fills the tenant with the demo programme; returns the number of records added (zeros on a second run). */
export async function seedDemo(orm: Orm, slug: string, log: Logger = silent): Promise<DemoCounts> {
  return underSeedLock(orm, slug, log, fill);
}

/** The first `npm start`: seeds the demo only while the tenant has no offers at all. */
export async function seedDemoIfEmpty(orm: Orm, slug: string, log: Logger): Promise<void> {
  const started = Date.now();
  const counts = await underSeedLock(orm, slug, log, async (ctx) => {
    const res = await tenantDb(ctx).selectNoFrom((eb) => eb.exists(eb.selectFrom('offers').select(sql`1`.as('one'))).as('any')).executeTakeFirst();
    return res?.any ? null : fill(ctx);
  });
  if (counts) log.info({ tenant: slug, ...counts, ms: Date.now() - started }, 'seeded the demo municipality');
}
