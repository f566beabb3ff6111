import type { TestTenant } from '../harness/harness.js';
import type { Overrides } from './factory.js';
import { dueApplication } from './receipt.factory.js';

// A booking (D8) is posted by the money writes: the fee charge of a due application.
export async function create(t: TestTenant, _overrides: Overrides = {}) {
  const a = await dueApplication(t);
  const res = await t.get(`/bookings?attendance=${a.uuid}`);
  if (res.status !== 200 || res.body.length !== 1) throw new Error(`factory: booking of ${a.uuid}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body[0];
}

/** PATCH is 405 on an existing booking, 404 on an unknown one. */
export const updateBody = { amount: 1 };
