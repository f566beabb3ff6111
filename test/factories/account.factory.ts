import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// A family account (D6): a unique e-mail address and the parents' names.
export function create(t: TestTenant, overrides: Overrides = {}) {
  const u = unique();
  return createThroughApi(t, '/accounts', {
    email: `familie-${u}@example.org`,
    firstname: 'Erika',
    lastname: `Muster${u}`,
    city: 'Musterstadt',
    ...overrides,
  });
}

export const updateBody = { city: 'Andere Stadt' };
