import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// A webhook subscription (issue 14): an https URL at a public address (an IP literal, so no DNS is needed; the
// harness never delivers), every event type.
export function create(t: TestTenant, overrides: Overrides = {}) {
  return createThroughApi(t, '/webhooks', { url: `https://93.184.215.14/hooks/${unique()}`, description: `Anbindung ${unique()}`, ...overrides });
}

export const updateBody = { description: 'Geänderte Anbindung' };

export const actionBodies: Record<string, Record<string, unknown> | undefined> = {
  'rotate-secret': undefined,
  redeliver: undefined,
};
