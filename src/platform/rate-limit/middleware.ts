import type { NextFunction, Request, Response } from 'express';
import { Problem } from '../http/problem.js';
import { actorOf } from '../auth/middleware.js';
import type { RouteTable } from '../http/routes.js';
import { tenantOf } from '../tenancy/middleware.js';
import type { RateLimiter } from './index.js';

// Spec 8 and D3/D10: every request counts, errors included. A valid token spends from its bucket; anything
// else (no token, or an invalid one) from its client IP's anonymous allowance on this tenant.
// Issue 13: a request with an invalid token still counts against the anonymous allowance, but is never
// refused for it: it gets its 401 (rejectInvalidToken) while the address's failed-authentication allowance
// lasts, and 429 only past that. Its rate-limit headers are that allowance's.
// Issue 22: so is a request WITHOUT a token on a path that needs one (D3: 401), `routes` telling which do.
export function rateLimit(limiter: RateLimiter, routes?: RouteTable) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const actor = actorOf(req);
      const { tenant } = tenantOf(req);
      const slug = tenant.slug;
      const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      const invalid = !!(req as { invalidToken?: boolean }).invalidToken;
      const route = !actor && !invalid ? routes?.match(req.method, req.url) : undefined;
      const missing = !!route && (route.access !== 'public' || !tenant.settings.publicAccess);
      if (missing) (req as { missingToken?: boolean }).missingToken = true;
      let decision;
      if (actor) decision = await limiter.consumeToken(slug, actor.tokenId, actor.ratePerMinute);
      else if (invalid || missing) {
        await limiter.consumeAnonymous(slug, ip);
        decision = await limiter.consumeFailedAuth(slug, ip);
      } else decision = await limiter.consumeAnonymous(slug, ip);
      for (const [k, v] of Object.entries(decision.headers)) res.setHeader(k, v);
      if (!decision.allowed) {
        const what = decision.policy !== 'failed-auth' ? 'Rate limit exceeded'
          : `Too many requests ${missing ? 'without an' : 'with an invalid'} access token from this address`;
        return next(new Problem(429, `${what}; retry in ${decision.retryAfterSeconds ?? 1} seconds.`, undefined, decision.headers));
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
