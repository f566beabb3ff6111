import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// An edition (D4): a name; procedure, flags and tasks keep their defaults.
export function create(t: TestTenant, overrides: Overrides = {}) {
  return createThroughApi(t, '/editions', { name: `Ferienpass ${unique()}`, ...overrides });
}

export const updateBody = { name: 'Umbenannte Ausgabe' };

// D7: both bodies are optional (sent without a body or content type).
export const actionBodies: Record<string, Record<string, unknown> | undefined> = {
  allocate: undefined,
  commit: undefined,
};
