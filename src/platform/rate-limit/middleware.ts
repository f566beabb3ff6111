import type { NextFunction, Request, Response } from 'express';
import { Problem } from '../http/problem.js';
import { actorOf } from '../auth/middleware.js';
import { tenantOf } from '../tenancy/middleware.js';
import type { RateLimiter } from './index.js';

// Spec 8 and D3/D10: every request counts, errors included. A valid token spends from its bucket; anything
// else (no token, or an invalid one) from its client IP's anonymous allowance on this tenant.
export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const actor = actorOf(req);
      const slug = tenantOf(req).tenant.slug;
      const decision = actor
        ? await limiter.consumeToken(slug, actor.tokenId)
        : await limiter.consumeAnonymous(slug, req.ip ?? req.socket.remoteAddress ?? 'unknown');
      for (const [k, v] of Object.entries(decision.headers)) res.setHeader(k, v);
      if (!decision.allowed) {
        return next(new Problem(429, `Rate limit exceeded; retry in ${decision.retryAfterSeconds ?? 1} seconds.`, undefined, decision.headers));
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}
