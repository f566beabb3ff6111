import { expect } from 'vitest';
import type { Schema, TestTenant } from '../../harness/harness.js';

// Small builders for the offer tests, through the real endpoints.
export async function edition(t: TestTenant, body: Record<string, unknown> = {}) {
  const res = await t.post('/editions', { name: `Sommer ${Math.random().toString(36).slice(2, 7)}`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function organiser(t: TestTenant, name: string) {
  const res = await t.post('/organisers', { name });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function category(t: TestTenant, name: string) {
  const res = await t.post('/categories', { name });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function offer(t: TestTenant, body: Record<string, unknown>, opts: { token?: string } = {}) {
  const res = await t.post('/offers', body, opts.token ? { token: opts.token } : {});
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function transition(t: TestTenant, uuid: string, name: string, opts: { token?: string } = {}) {
  const res = await t.post(`/offers/${uuid}/transition`, { transition: name }, opts.token ? { token: opts.token } : {});
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export const names = (res: { body: Schema<'Offer'>[] }) => res.body.map((o) => o.name);
