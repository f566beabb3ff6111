import { initTRPC } from '@trpc/server';
import type { ServiceContext } from '../context.js';
import { forbidden } from '../../domain/errors.js';
import { refuseUnknownFields, type BodyFieldRules } from './body-fields.js';
import { unauthorized } from './problem.js';
import type { Meta } from './meta.js';
import type { RawUpload } from './raw.js';
import { poolGuardOf } from '../db/orm.js';
import { runAttempts } from '../db/attempts.js';

// Who may call a procedure is declared in its meta and enforced here, once (spec 5, D3):
// - `public`: anonymous callers while the tenant's publicAccess is on; any valid token (legacy too).
// - `read`: a read, read-write token; legacy tokens only see the public offer endpoints.
// - `write`: a read-write token.
// `roles` narrows further; organisers are then limited to their own records by the services. A website token
// (D11) reads what `public` procedures show (also while publicAccess is off) and calls only the procedures that
// name the role `website`; everything else is 403 for it.
export type { Access, ActorRole, Meta } from './meta.js';

export type TrpcContext = ServiceContext & {
  requestId: string;
  /** The file a procedure with `rawBody` was sent (raw.ts); absent elsewhere. */
  upload?: RawUpload;
  /** What each body operation's body may hold (body-fields.ts), given by the API's handler (api.ts). */
  bodyFields?: BodyFieldRules;
};

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
    case 'website':
      if (access === 'public') return next();
      if (!meta?.roles?.includes('website')) {
        throw forbidden('A website token reads public offers and hands in family applications, confirmations, consents and answer files; nothing else.');
      }
      if (access === 'write' && viewer.actor.access !== 'read-write') throw forbidden('This token is read-only and may not change anything.');
      return next();
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

/** D12: after the access check, a body field the resource does not have is 422 (body-fields.ts). */
const knownBodyFields = t.middleware(async ({ ctx, path, getRawInput, next }) => {
  await refuseUnknownFields(ctx.bodyFields, path, getRawInput);
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
export const procedure = t.procedure.use(enforceAccess).use(knownBodyFields).use(retryConflicts);
export const createCallerFactory = t.createCallerFactory;
