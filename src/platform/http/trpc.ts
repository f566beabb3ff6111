import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { ServiceContext } from '../context.js';
import { forbidden } from '../../domain/errors.js';
import { unauthorized } from './problem.js';
import { poolGuardOf } from '../db/orm.js';
import { runAttempts } from '../db/attempts.js';

// Who may call a procedure is declared in its meta and enforced here, once (spec 5, D3):
// - `public`: anonymous callers while the tenant's publicAccess is on; any valid token (legacy too).
// - `read`: a read, read-write token; legacy tokens only see the public offer endpoints.
// - `write`: a read-write token.
// `roles` narrows further; organisers are then limited to their own records by the services.
export type Access = 'public' | 'read' | 'write';
export type ActorRole = 'admin' | 'organiser';

export type Meta = OpenApiMeta & {
  access: Access;
  roles?: ActorRole[];
  /** 201, 202 or 204 where the spec's table of writes says so (spec 1.11). */
  successStatus?: 200 | 201 | 202 | 204;
};

export type TrpcContext = ServiceContext & { requestId: string };

const t = initTRPC.context<TrpcContext>().meta<Meta>().create();

const enforceAccess = t.middleware(({ ctx, meta, next }) => {
  const access = meta?.access ?? 'read';
  const viewer = ctx.viewer;
  switch (viewer.kind) {
    case 'anonymous':
      if (access !== 'public') throw unauthorized('This endpoint needs an access token (Authorization: Bearer <token>).');
      if (!ctx.tenant.settings.publicAccess) throw unauthorized('Public access is switched off; send an access token.');
      return next();
    case 'legacy':
      if (access !== 'public') throw forbidden('This token has the scope api:offer:read and may only read offers.');
      break;
    case 'admin':
    case 'organiser':
      if (access === 'write' && viewer.actor.access !== 'read-write') {
        throw forbidden('This token is read-only and may not change anything.');
      }
      break;
    default:
      // Requests carry a token's viewer or none; anything else is refused.
      throw unauthorized('This endpoint needs an access token (Authorization: Bearer <token>).');
  }
  if (meta?.roles && !meta.roles.includes(viewer.actor.role)) {
    throw forbidden(`This action needs the role ${meta.roles.map((r) => `ROLE_${r.toUpperCase()}`).join(' or ')}.`);
  }
  return next();
});

/**
 * Issue 23: every procedure runs as attempts (platform/db/attempts.ts): a deadlock or serialization failure is
 * retried inside the service, and a writer that found its offer's share of the pool full waits without its
 * connection and runs again. A run again gets a fresh entity manager (the failed one may hold entities of the
 * rolled-back transaction).
 */
const retryConflicts = t.middleware(async ({ ctx, next }) => {
  const guard = ctx.em ? poolGuardOf(ctx.em) : undefined;
  if (!guard) return next();
  let runs = 0;
  return runAttempts(() => (runs++ === 0 ? next() : next({ ctx: { em: ctx.em.fork() } })), {
    offers: guard.offers,
    failureOf: (r) => (r.ok ? null : (r.error.cause ?? r.error)),
    onRetry: (reason) => {
      guard.emit('retried', ctx.tenant.schema, reason);
      ctx.log.info({ tenant: ctx.tenant.slug, reason, requestId: ctx.requestId }, 'use case run again after a lock conflict');
    },
  });
});

export const router = t.router;
export const procedure = t.procedure.use(enforceAccess).use(retryConflicts);
export const createCallerFactory = t.createCallerFactory;
