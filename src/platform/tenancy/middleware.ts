import type { NextFunction, Request, Response } from 'express';
import { notFound } from '../../domain/errors.js';
import { withConnectionAffinity } from '../db/affinity.js';
import type { TrustProxy } from '../config.js';
import { forwardedHost, trustFunction } from '../http/forwarded.js';
import { badRequest, Problem } from '../http/problem.js';
import type { TenantRegistry } from './registry.js';
import { parseHostHeader, pathBelowBase, type Tenant } from './tenant.js';

// The one place that reads the Host header (D1): host (port removed, lower-cased; X-Forwarded-Host only
// as written by a trusted proxy, TRUST_PROXY) -> tenant and base path. Unknown hosts and paths outside the base path are 404.
// Below this middleware the request's URL is relative to the base path.
export type TenantMatch = { tenant: Tenant; basePath: string; host: string };

export function tenantOf(req: Request): TenantMatch {
  const match = (req as { tenantMatch?: TenantMatch }).tenantMatch;
  if (!match) throw new Error('tenant not resolved for this request');
  return match;
}

/** Issue 24: every request of a suspended tenant (`tenant suspend`), whatever its path: 503 with a sentence. */
export function suspendedProblem(tenant: Tenant): Problem {
  const reason = tenant.suspended?.reason ? `: ${tenant.suspended.reason.replace(/[.\s]+$/, '')}` : '';
  return new Problem(503, `The holiday programme "${tenant.name}" is suspended by its provider${reason}. Its data is kept; this API answers again once it is resumed.`);
}

export function resolveTenant(registry: TenantRegistry, opts: { trustProxy: TrustProxy | boolean }) {
  const trust = trustFunction(opts.trustProxy);
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      // Behind a trusted proxy: the entry that proxy wrote (http/forwarded.ts), not one the client put before it.
      const sent = (forwardedHost(req, trust) ?? req.headers.host ?? '').trim();
      if (!sent) return next(notFound('No holiday programme is served at this host.'));
      const parsed = parseHostHeader(sent);
      // Issue 13: an out-of-range port (`:99999`) or garbage reached URL parsing further down and was a 500.
      if (!parsed) return next(badRequest('The Host header is malformed: expected a host name and an optional port 0-65535.'));
      const host = parsed.host;
      // Readers below (express, the tRPC adapter's URL) see the checked host only, also behind a proxy.
      req.headers.host = parsed.port ? `${host}:${parsed.port}` : host;
      const match = await registry.resolveHost(host);
      if (!match) return next(notFound('No holiday programme is served at this host.'));
      if (match.tenant.suspended) return next(suspendedProblem(match.tenant));
      const q = req.url.indexOf('?');
      const path = q < 0 ? req.url : req.url.slice(0, q);
      const below = pathBelowBase(match.basePath, path);
      if (below === null) return next(notFound(`This host serves the API below ${match.basePath}.`));
      req.url = below + (q < 0 ? '' : req.url.slice(q));
      (req as { tenantMatch?: TenantMatch }).tenantMatch = { ...match, host };
      // The rest of the request prefers its schema's connection (db/affinity.ts).
      withConnectionAffinity(match.tenant.schema, next);
    } catch (err) {
      next(err);
    }
  };
}
