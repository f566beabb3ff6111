import type { TestTenant } from '../harness/harness.js';
import type { Overrides } from './factory.js';
import { dueApplication } from './receipt.factory.js';

// A ledger (D8) is made by the money writes: the debtor's account for the edition of a due application.
export async function create(t: TestTenant, _overrides: Overrides = {}) {
  const a = await dueApplication(t);
  const res = await t.get(`/ledgers?account=${a.account!.uuid}`);
  if (res.status !== 200 || res.body.length !== 1) throw new Error(`factory: ledger of ${a.account!.uuid}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.body[0];
}
