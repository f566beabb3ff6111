import type { Request, Response, NextFunction } from 'express';
import type { AnyRouter } from '@trpc/server';
import { operationsOf, templatePattern } from './operations.js';
import { Problem } from './problem.js';

// The router's operations by method and path template, for what the HTTP layer decides before a procedure
// runs: whether a path needs a token (a missing one is 401, never the anonymous 429; D3, issue 22) and which
// methods a path has (a method it lacks is 405 with `Allow`, not 404; issue 22).

type Route = { re: RegExp; method: string; access: string; answersOnly405: boolean };

export type RouteTable = {
  /** The operation of this method and path (below the base path, without the query), if any. */
  match(method: string, path: string): { access: string } | undefined;
  /** The methods this path has, when it has any: GET, POST, PATCH, DELETE in that order. */
  methodsOf(path: string): string[];
};

const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function routeTable(router: AnyRouter): RouteTable {
  const routes: Route[] = [];
  for (const { meta, method, template } of operationsOf(router)) {
    // PATCH/DELETE of receipts and bookings exist only to answer 405 themselves; they are not methods the path has.
    routes.push({ re: templatePattern(template), method, access: meta.access ?? 'read', answersOnly405: method !== 'GET' && meta.access !== 'write' });
  }
  const clean = (path: string) => path.split('?')[0]!;
  return {
    match: (method, path) => {
      const m = method === 'HEAD' ? 'GET' : method;
      return routes.find((r) => r.method === m && r.re.test(clean(path)));
    },
    methodsOf: (path) => {
      const found = new Set(routes.filter((r) => !r.answersOnly405 && r.re.test(clean(path))).map((r) => r.method));
      return ORDER.filter((m) => found.has(m));
    },
  };
}

/** A method the path does not have: 405 with `Allow` (RFC 9110 15.5.6); a path nobody has stays 404. */
export function methodNotAllowed(routes: RouteTable) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (routes.match(req.method, req.url)) return next();
    const allowed = routes.methodsOf(req.url);
    if (allowed.length === 0) return next();
    next(new Problem(405, `${req.method} is not allowed here; this path allows ${allowed.join(', ')}.`, undefined, { Allow: allowed.join(', ') }));
  };
}
