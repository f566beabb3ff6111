import type { TestTenant } from '../harness/harness.js';
import { PNG } from '../fixtures/files.js';
import type { Overrides } from './factory.js';

// An answer file (spec 2.2 `files`, D11): a small PNG uploaded with the tenant's admin token (or `token`).
export async function create(t: TestTenant, overrides: Overrides = {}) {
  const res = await t.request('POST', `/files?name=${encodeURIComponent(String(overrides.name ?? 'scan.png'))}`, {
    rawBody: (overrides.bytes as Buffer | undefined) ?? PNG,
    headers: { 'content-type': String(overrides.type ?? 'image/png') },
    token: (overrides.token as string | undefined) ?? t.adminToken,
  });
  if (res.status !== 201) throw new Error(`factory: POST /files gave ${res.status}, not 201: ${res.text.slice(0, 500)}`);
  return res.body;
}
