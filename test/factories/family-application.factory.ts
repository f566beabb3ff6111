import type { TestTenant } from '../harness/harness.js';
import { create as createEdition } from './edition.factory.js';
import { create as createOffer } from './offer.factory.js';
import { unique, type Overrides } from './factory.js';

// A family's own application (D11): a published offer of a first-come edition, a website token, and one child
// applying through POST /family-applications. Returns the first application made (`email_unconfirmed`).
export async function create(t: TestTenant, overrides: Overrides = {}) {
  const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
  const offer = await createOffer(t, { edition });
  const published = await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
  if (published.status !== 200) throw new Error(`factory: publish gave ${published.status}: ${published.text.slice(0, 300)}`);
  const token = await t.token({ role: 'website', name: 'Website' });
  const res = await t.post('/family-applications', {
    account: { email: `familie-${unique()}@example.org`, firstname: 'Katrin', lastname: 'Müller' },
    participants: [{ firstname: 'Emma', lastname: 'Müller', dateOfBirth: '2018-03-01', wishes: [{ offer: offer.uuid }] }],
    ...overrides,
  }, { token });
  if (res.status !== 201) throw new Error(`factory: POST /family-applications gave ${res.status}, not 201: ${res.text.slice(0, 500)}`);
  return res.body[0];
}
