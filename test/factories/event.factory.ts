import type { Schema, TestTenant } from '../harness/harness.js';
import type { Overrides } from './factory.js';
import { create as createOffer } from './offer.factory.js';

// An event (issue 14) is never posted: a change makes it. This one publishes a new offer and returns the
// `offer.published` event as the feed lists it, with its id also as `uuid` (what the isolation matrix looks for).
export async function create(t: TestTenant, _overrides: Overrides = {}): Promise<{ uuid: string }> {
  const offer = await createOffer(t);
  const published = await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
  if (published.status !== 200) throw new Error(`factory: publish ${offer.uuid}: ${published.status} ${published.text.slice(0, 300)}`);
  return { uuid: (await waitForEvent(t, (e) => e.type === 'offer.published' && e.data.offer === offer.uuid)).id };
}

/**
 * Reads the whole feed until an event matches. An event shows once every older writing transaction of the
 * database cluster has ended, so another session's open transaction (a parallel test file, another test run on
 * the same server) can hold it back for a while.
 */
export const EVENT_WAIT_MS = 90_000;

export async function waitForEvent(t: TestTenant, match: (e: Schema<'Event'>) => boolean, timeoutMs = EVENT_WAIT_MS): Promise<Schema<'Event'>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = (await readFeed(t)).find(match);
    if (found) return found;
    if (Date.now() > until) throw new Error('factory: the expected event did not appear in the feed');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every event of the tenant's feed, page by page. */
export async function readFeed(t: TestTenant, query = ''): Promise<Schema<'Event'>[]> {
  const events: Schema<'Event'>[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await t.get(`/events?itemsPerPage=200${query}${after ? `&after=${after}` : ''}`);
    if (res.status !== 200) throw new Error(`factory: GET /events: ${res.status} ${res.text.slice(0, 300)}`);
    events.push(...res.body.events);
    if (res.body.events.length < 200) return events;
    after = res.body.next;
  }
}
