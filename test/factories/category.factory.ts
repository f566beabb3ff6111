import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// A category (D6): a name; the alias is derived.
export function create(t: TestTenant, overrides: Overrides = {}) {
  return createThroughApi(t, '/categories', { name: `Kategorie ${unique()}`, ...overrides });
}

export const updateBody = { name: 'Umbenannte Kategorie' };
