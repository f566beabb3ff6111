import type { ResponseBody, TestTenant } from '../harness/harness.js';

// What every factory module exports. A factory makes a valid record THROUGH THE API on a given tenant, so
// the record is exactly what a client would have made (aliases, derived fields, touched parents).
export type Overrides = Record<string, unknown>;

/** What every factory's record has (the 201 body; an event's id as `uuid`): the fields that identify it. */
export type FactoryRecord = { uuid: string; alias?: string; email?: string };

export type FactoryModule = {
  /** Creates one valid record on `t` (admin token) and returns the 201 response body. */
  create(t: TestTenant, overrides?: Overrides): Promise<FactoryRecord>;
  /** A valid `PATCH /<collection>/{uuid}` body (so a foreign record's 404 is not hidden behind a 422). */
  updateBody?: Record<string, unknown>;
  /** Valid bodies of `POST /<collection>/{uuid}/<action>`, by action name (undefined: no body). */
  actionBodies?: Record<string, Record<string, unknown> | undefined>;
};

/** A short random suffix that keeps names, aliases and e-mail addresses unique within a tenant. */
export function unique(): string {
  return Math.random().toString(36).slice(2, 8);
}

/** POSTs `body` with the tenant's admin token and returns the created record; anything but 201 throws. */
export async function createThroughApi<P extends string>(t: TestTenant, path: P, body: Record<string, unknown>): Promise<ResponseBody<'post', P>> {
  const res = await t.post(path, body);
  if (res.status !== 201) {
    throw new Error(`factory: POST ${path} ${JSON.stringify(body).slice(0, 300)} gave ${res.status}, not 201: ${res.text.slice(0, 500)}`);
  }
  return res.body;
}
