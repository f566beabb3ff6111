import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// An organiser (host, D6) with a few contact fields.
export function create(t: TestTenant, overrides: Overrides = {}) {
  const u = unique();
  return createThroughApi(t, '/organisers', {
    name: `Verein ${u}`,
    email: `verein-${u}@example.org`,
    phone: '030 1234567',
    city: 'Musterstadt',
    ...overrides,
  });
}

export const updateBody = { name: 'Umbenannter Verein' };
