import createClient from 'openapi-fetch';
import type { components, paths } from '../schema.js';

// A municipality's public website through the generated types and openapi-fetch (issue 21, D11): what its
// application form does with the website token. It reads the public offers with their questions, uploads a
// file answer, hands in one family's application, and, once the family clicked the link of its confirmation
// mail, posts the token of that link. Run it against a service:
//
//   npm run --silent client:family -- http://localhost:8080/api "$WEBSITE_TOKEN" [<confirmation token>]
//
// (a website token: `cli token issue <slug> --role website`). Without a confirmation token it stops after the
// application; the family's mail (.data/mail/<slug>/*.eml without SMTP_URL) holds the link.

export type Attendance = components['schemas']['Attendance'];
export type Problem = components['schemas']['Problem'];

export type FamilyOptions = {
  baseUrl: string;
  /** A website token of the municipality. */
  token: string;
  /** A fetch of your own (tests choose the municipality by Host, which the built-in fetch cannot send). */
  fetch?: (request: Request) => Promise<Response>;
  /** The token of the family's confirmation link, once it has one (e.g. read from the mail); none: stop before. */
  confirmationToken?: (email: string) => Promise<string | null>;
  log?: (line: string) => void;
};

export type FamilySummary = { email: string; applied: Attendance[]; confirmed: Attendance[]; fileUuid: string | null; refusedWish: string | null };

class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem | undefined, what: string) {
    super(`${what}: ${status} ${problem?.detail ?? ''}`);
  }
}

function ok<T>(what: string, res: { data?: T; error?: unknown; response: Response }): T {
  if (res.error !== undefined || res.data === undefined) throw new ApiError(res.response.status, res.error as Problem | undefined, what);
  return res.data;
}

/** A one-page PDF stands in for the family's scanned document. */
const SCAN = new TextEncoder().encode('%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');

export async function applyAsFamily(opts: FamilyOptions): Promise<FamilySummary> {
  const log = opts.log ?? (() => {});
  const api = createClient<paths>({
    baseUrl: opts.baseUrl,
    headers: { Authorization: `Bearer ${opts.token}` },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });

  // The offers the form shows: published, with places, taking online applications; their questions.
  const offers = ok('offers', await api.GET('/offers', { params: { query: { itemsPerPage: 200, sort: 'begin' } } }));
  const open = offers.filter((o) => o.onlineApplication && o.requiresApplication && !o.fullyBooked && !o.status.includes('cancelled'));
  const offer = open[0];
  if (!offer) throw new Error('no offer takes online applications');
  log(`applying for ${offer.name} (${offer.applicationQuestions?.length ?? 0} questions)`);

  // The answers: a file question gets the scan, uploaded first as the raw body (PDF, PNG or JPEG, 10 MiB).
  const answers: Record<string, string | boolean | number> = {};
  let fileUuid: string | null = null;
  for (const q of offer.applicationQuestions ?? []) {
    if (q.type === 'file') {
      const file = ok('upload', await api.POST('/files', {
        params: { query: { name: 'impfpass.pdf' } },
        body: SCAN as unknown as string,
        bodySerializer: (b) => b,
        headers: { 'Content-Type': 'application/pdf' },
      }));
      fileUuid = file.uuid;
      answers[q.uuid] = file.uuid;
    } else if (q.type === 'yn') answers[q.uuid] = true;
    else if (q.type === 'int') answers[q.uuid] = 1;
    else answers[q.uuid] = 'keine';
  }

  // One wish that cannot be (an offer that does not exist) refuses the whole request, naming the wish.
  const email = `familie.${Date.now().toString(36)}@example.org`;
  const account = { email, firstname: 'Katrin', lastname: 'Müller', phone: '0170 1234567', street: 'Hauptstr. 1', zip: '12345', city: 'Musterstadt' };
  const child = { firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-05-23' };
  const refused = await api.POST('/family-applications', {
    body: { account, participants: [{ ...child, wishes: [{ offer: offer.uuid, answers }, { offer: '00000000-0000-4000-8000-000000000000' }] }] },
  });
  const refusedWish = refused.response.status === 422 ? (refused.error as Problem | undefined)?.violations?.[0]?.propertyPath ?? null : null;
  if (refused.response.status === 422) log(`refused as a whole: ${refusedWish}`);

  // The family's application: one request, all or nothing.
  const applied = ok('apply', await api.POST('/family-applications', {
    body: { account, participants: [{ ...child, wishes: [{ offer: offer.uuid, userPriority: 1, answers }] }] },
  }));
  log(`applied: ${applied.map((a) => `${a.offer.name} ${a.status}`).join(', ')}`);

  // The family clicked the link of its mail; the website's page posts the token.
  const link = await opts.confirmationToken?.(email);
  let confirmed: Attendance[] = [];
  if (link) {
    confirmed = ok('confirm', await api.POST('/family-applications/confirm', { body: { token: link } }));
    log(`confirmed: ${confirmed.map((a) => `${a.offer.name} ${a.status}`).join(', ')}`);
    const again = await api.POST('/family-applications/confirm', { body: { token: link } });
    if (again.response.status !== 404) throw new Error(`a used link answered ${again.response.status}`);
  }
  return { email, applied, confirmed, fileUuid, refusedWish };
}

// Run directly: `node --import tsx clients/typescript/example/family.ts <baseUrl> <website token> [<confirmation token>]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [baseUrl, token, confirmation] = process.argv.slice(2);
  if (!baseUrl || !token) {
    console.error('usage: family.ts <baseUrl, e.g. http://localhost:8080/api> <website token> [<confirmation token>]');
    process.exit(2);
  }
  applyAsFamily({ baseUrl, token, confirmationToken: async () => confirmation ?? null, log: (l) => console.log(l) }).then(
    (summary) => console.log(JSON.stringify({ email: summary.email, applied: summary.applied.map((a) => a.status), confirmed: summary.confirmed.map((a) => a.status) }, null, 2)),
    (err) => {
      console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
