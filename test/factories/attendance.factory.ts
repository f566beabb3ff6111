import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, type Overrides } from './factory.js';
import { create as createOffer } from './offer.factory.js';
import { create as createParticipant } from './participant.factory.js';

// An application (spec 2.2, 4.3): a participant applying for an offer, both made through the API unless
// `offer` / `participant` are passed (UUIDs). Without `status` the edition's procedure decides.
export async function create(t: TestTenant, overrides: Overrides = {}) {
  const offer = overrides.offer ?? (await createOffer(t)).uuid;
  const participant = overrides.participant ?? (await createParticipant(t)).uuid;
  return createThroughApi(t, '/attendances', { offer, participant, ...overrides });
}

export const updateBody = { userPriority: 1 };

export const actionBodies: Record<string, Record<string, unknown> | undefined> = {
  transition: { transition: 'reject' },
  // The target must exist on the caller's tenant; a record of another tenant is 404 before the body matters.
  transfer: { offer: '00000000-0000-4000-8000-000000000000' },
};
