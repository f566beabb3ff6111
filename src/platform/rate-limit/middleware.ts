import type { NextFunction, Request, Response } from 'express';
import { Problem } from '../http/problem.js';
import { actorOf } from '../auth/middleware.js';
import { tenantOf } from '../tenancy/middleware.js';
import type { RateLimiter } from './index.js';

// Spec 8 and D3/D10: every request counts, errors included. A valid token spends from its bucket; anything
// else (no token, or an invalid one) from its client IP's anonymous allowance on this tenant.
// Issue 13: a request with an invalid token still counts against the anonymous allowance, but is never
// refused for it: it gets its 401 (rejectInvalidToken) while the address's failed-authentication allowance
// lasts, and 429 only past that. Its rate-limit headers are that allowance's.
export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const actor = actorOf(req);
      const slug = tenantOf(req).tenant.slug;
      const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      let decision;
      if (actor) decision = await limiter.consumeToken(slug, actor.tokenId, actor.ratePerMinute);
      else if ((req as { invalidToken?: boolean }).invalidToken) {
        await limiter.consumeAnonymous(slug, ip);
        decision = await limiter.consumeFailedAuth(slug, ip);
      } else decision = await limiter.consumeAnonymous(slug, ip);
      for (const [k, v] of Object.entries(decision.headers)) res.setHeader(k, v);
      if (!decision.allowed) {
        const what = decision.policy === 'failed-auth' ? 'Too many requests with an invalid access token from this address' : 'Rate limit exceeded';
        return next(new Problem(429, `${what}; retry in ${decision.retryAfterSeconds ?? 1} seconds.`, undefined, decision.headers));
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
