import type { TestTenant } from '../harness/harness.js';
import { create as createEdition } from './edition.factory.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// An offer (spec 2.3, D5): a draft in a new edition (unless `edition` is passed) with one date, a fee,
// an age range and places.
export async function create(t: TestTenant, overrides: Overrides = {}) {
  const edition = overrides.edition ?? (await createEdition(t)).uuid;
  return createThroughApi(t, '/offers', {
    name: `Angebot ${unique()}`,
    edition,
    fee: 500,
    minAge: 6,
    maxAge: 12,
    maxParticipants: 10,
    dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }],
    ...overrides,
  });
}

export const updateBody = { teaser: 'Geänderter Teaser' };

export const actionBodies: Record<string, Record<string, unknown> | undefined> = {
  transition: { transition: 'publish' },
  copy: {},
  variant: undefined,
  refill: undefined,
};
