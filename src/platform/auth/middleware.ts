import type { NextFunction, Request, Response } from 'express';
import type { Executor } from '../db/sql.js';
import { unauthorized } from '../http/problem.js';
import { tenantOf } from '../tenancy/middleware.js';
import { verifyToken, type Actor } from './tokens.js';

// D3: a bearer token is looked up in the tenant's own schema, so another tenant's token is unknown here
// (401). Whether the caller may use an endpoint is decided by the procedure's meta (http/trpc.ts).
export function actorOf(req: Request): Actor | null {
  return (req as { actor?: Actor | null }).actor ?? null;
}

export function authenticate(db: Executor) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const header = req.headers.authorization;
      (req as { actor?: Actor | null }).actor = null;
      if (!header) return next();
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const actor = m ? await verifyToken(db, tenantOf(req).tenant.schema, m[1]) : null;
      if (!actor) {
        (req as { invalidToken?: boolean }).invalidToken = true;
        return next();
      }
      (req as { actor?: Actor | null }).actor = actor;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * After rate limiting (an invalid token counts against its IP's anonymous bucket, D10), answer 401; so does a
 * request without a token where one is needed (marked by the rate limiter, issue 22).
 */
export function rejectInvalidToken(req: Request, _res: Response, next: NextFunction) {
  if ((req as { invalidToken?: boolean }).invalidToken) {
    return next(unauthorized('The access token is unknown, expired, revoked or belongs to another host.'));
  }
  if ((req as { missingToken?: boolean }).missingToken) {
    return next(unauthorized(tenantOf(req).tenant.settings.publicAccess
      ? 'This endpoint needs an access token (Authorization: Bearer <token>).'
      : 'Public access is switched off; send an access token.'));
  }
  next();
}
