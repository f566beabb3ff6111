import type { TestTenant } from '../harness/harness.js';
import type { Overrides } from './factory.js';
import { dueApplication } from './receipt.factory.js';

// A debtor (D8) is made by the money writes, never posted: a family whose child has a due application.
export async function create(t: TestTenant, _overrides: Overrides = {}) {
  const a = await dueApplication(t);
  const res = await t.get(`/debtors?account=${a.account!.uuid}`);
  if (res.status !== 200 || res.body.length !== 1) throw new Error(`factory: debtor of ${a.account!.uuid}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body[0];
}
