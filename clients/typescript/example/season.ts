import createClient from 'openapi-fetch';
import type { components, paths } from '../schema.js';

// A municipality's season through the generated types and openapi-fetch: what an integration of a
// municipality's admin team does, from an empty programme to a drawn, committed, paid and partly reversed
// season. Run it against a service:
//
//   npm run --silent client:example -- http://localhost:8080/api "$TOKEN"
//
// (a read-write admin token of that municipality). test/clients/typescript-client.test.ts runs it in CI
// against a service it starts. Every call is typed by clients/typescript/schema.d.ts; an error answer is
// the document's Problem (application/problem+json).

export type Offer = components['schemas']['Offer'];
export type Problem = components['schemas']['Problem'];

export type SeasonOptions = {
  baseUrl: string;
  token: string;
  /** A fetch of your own (tests choose the municipality by Host, which the built-in fetch cannot send). */
  fetch?: (request: Request) => Promise<Response>;
  /** Called while waiting for background work (allocation, commit); default: wait 200 ms. */
  settle?: () => Promise<unknown>;
  log?: (line: string) => void;
};

export type SeasonSummary = {
  edition: string;
  confirmed: number;
  waitlisted: number;
  receipt: string;
  reversal: string;
  ledgerBalance: number;
  bookings: number;
  /** `X-Total-Count` of a one-record page of the bookings: every list says how many records match. */
  bookingsTotal: number;
};

class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem | undefined, what: string) {
    super(`${what}: ${status} ${problem?.detail ?? ''}`);
  }
}

/** The data of a successful answer, or an ApiError carrying the problem+json body. */
function ok<T>(what: string, res: { data?: T; error?: unknown; response: Response }): T {
  if (res.error !== undefined || res.data === undefined) throw new ApiError(res.response.status, res.error as Problem | undefined, what);
  return res.data;
}

export async function walkSeason(opts: SeasonOptions): Promise<SeasonSummary> {
  const log = opts.log ?? (() => {});
  const settle = opts.settle ?? (() => new Promise((r) => setTimeout(r, 200)));
  const api = createClient<paths>({
    baseUrl: opts.baseUrl,
    headers: { Authorization: `Bearer ${opts.token}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const stamp = Date.now().toString(36);

  // Reference data and the edition, allocated by lot.
  const category = ok('create category', await api.POST('/categories', { body: { name: `Natur ${stamp}` } }));
  const organiser = ok('create organiser', await api.POST('/organisers', { body: { name: `Naturschutzjugend ${stamp}`, email: 'info@naju.example' } }));
  const edition = ok('create edition', await api.POST('/editions', { body: { name: `Herbstferien ${stamp}`, procedure: 'lot' } }));
  log(`edition ${edition.name} (${edition.procedure})`);

  // An offer with two places, published.
  const offer = ok('create offer', await api.POST('/offers', {
    body: {
      name: `Drachen bauen ${stamp}`,
      edition: edition.uuid,
      hosts: [organiser.uuid],
      categories: [category.uuid],
      fee: 1500,
      maxParticipants: 2,
      minAge: 6,
      maxAge: 14,
      dates: [{ begin: '2027-10-14T10:00:00+02:00', end: '2027-10-14T15:00:00+02:00' }],
    },
  }));
  const published: Offer = ok('publish', await api.POST('/offers/{uuid}/transition', { params: { path: { uuid: offer.uuid } }, body: { transition: 'publish', notify: false } }));
  log(`offer ${published.name}: ${published.status.join('+')}, fee ${published.fee} cents`);

  // A family with three children; each applies.
  const account = ok('create account', await api.POST('/accounts', { body: { email: `familie.${stamp}@example.org`, firstname: 'Katrin', lastname: 'Beispiel' } }));
  const applications: string[] = [];
  for (const [firstname, dateOfBirth] of [['Emma', '2016-03-14'], ['Paul', '2018-09-02'], ['Ida', '2017-05-03']] as const) {
    const child = ok('create participant', await api.POST('/participants', { body: { firstname, lastname: 'Beispiel', dateOfBirth, account: account.uuid } }));
    const a = ok('apply', await api.POST('/attendances', { body: { offer: offer.uuid, participant: child.uuid, notify: false } }));
    applications.push(a.uuid);
  }
  const counts = ok('offer', await api.GET('/offers/{uuid}', { params: { path: { uuid: offer.uuid } } })).attendances;
  log(`applications waiting: ${counts?.waiting}`);

  // The lot, in the background (202), then the commit (202) that makes the fees due.
  ok('allocate', await api.POST('/editions/{uuid}/allocate', { params: { path: { uuid: edition.uuid } }, body: { seed: 42 } }));
  let drawn = edition;
  for (let i = 0; i < 150 && !drawn.allocations[0]?.finishedAt; i++) {
    await settle();
    drawn = ok('edition', await api.GET('/editions/{uuid}', { params: { path: { uuid: edition.uuid } } }));
  }
  const run = drawn.allocations[0];
  if (!run?.finishedAt) throw new Error('the lot was not drawn in time');
  log(`lot drawn with seed ${run.seed}: ${run.confirmed} confirmed, ${run.waitlisted} waitlisted`);
  ok('commit', await api.POST('/editions/{uuid}/commit', { params: { path: { uuid: edition.uuid } } }));
  let decided = ok('applications', await api.GET('/attendances', { params: { query: { offer: offer.uuid, itemsPerPage: 200 } } }));
  for (let i = 0; i < 150 && decided.some((a) => a.heldBack); i++) {
    await settle();
    decided = ok('applications', await api.GET('/attendances', { params: { query: { offer: offer.uuid, itemsPerPage: 200 } } }));
  }
  const confirmed = decided.filter((a) => a.status === 'confirmed');
  if (confirmed.some((a) => a.heldBack || !a.payable)) throw new Error('the commit did not make the fees due');

  // The family pays; the receipt is then reversed (money back), and the application is due again.
  const receipt = ok('receipt', await api.POST('/receipts', { body: { items: confirmed.map((a) => ({ attendance: a.uuid })) } }));
  log(`receipt ${receipt.number}: ${receipt.total} cents`);
  const reversed = ok('reverse', await api.POST('/receipts/{uuid}/reverse', { params: { path: { uuid: receipt.uuid } }, body: { notify: false } }));
  const reversal = reversed.reversedBy?.name ?? '';
  log(`receipt ${reversed.number} reversed by ${reversal}`);

  // The money records answer. A list is a page; `X-Total-Count` says how many records match (no `Link`, spec 4.1):
  // more follow while page * itemsPerPage is below it.
  const ledgers = ok('ledgers', await api.GET('/ledgers', { params: { query: { edition: edition.uuid } } }));
  const bookings = ok('bookings', await api.GET('/bookings', { params: { query: { edition: edition.uuid, itemsPerPage: 200 } } }));
  if (!bookings[0]) throw new Error('the season left no booking');
  const first = await api.GET('/bookings', { params: { query: { edition: edition.uuid, itemsPerPage: 1 } } });
  const bookingsTotal = Number(first.response.headers.get('X-Total-Count'));
  if (bookings.length < 200 && bookingsTotal !== bookings.length) throw new Error(`X-Total-Count says ${bookingsTotal} bookings, the list holds ${bookings.length}`);
  if (first.response.headers.get('Link') !== null) throw new Error('a list answer carries a Link header (spec 4.1: none)');

  // A malformed filter is a 400 Problem naming it.
  const bad = await api.GET('/offers', { params: { query: { itemsPerPage: 500 } } });
  if (bad.response.status !== 400 || !bad.error?.detail.includes('itemsPerPage')) throw new Error('itemsPerPage=500 was not refused');

  return {
    edition: edition.uuid,
    confirmed: confirmed.length,
    waitlisted: decided.filter((a) => a.status === 'waitlisted').length,
    receipt: receipt.number,
    reversal,
    ledgerBalance: ledgers.reduce((sum, l) => sum + l.balance, 0),
    bookings: bookings.length,
    bookingsTotal,
  };
}

// Run directly: `node --import tsx clients/typescript/example/season.ts <baseUrl> <token>`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [baseUrl, token] = process.argv.slice(2);
  if (!baseUrl || !token) {
    console.error('usage: season.ts <baseUrl, e.g. http://localhost:8080/api> <read-write admin token>');
    process.exit(2);
  }
  walkSeason({ baseUrl, token, log: (l) => console.log(l) }).then(
    (summary) => console.log(JSON.stringify(summary, null, 2)),
    (err) => {
      console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
