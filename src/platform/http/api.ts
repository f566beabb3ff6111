import type { Request, Response } from 'express';
import type { AnyRouter } from '@trpc/server';
import { TRPCError } from '@trpc/server';
import { createProcedureCache, getQuery, instanceofZodTypeLikeVoid, instanceofZodTypeObject, normalizePath, unwrapZodType } from 'trpc-to-openapi';
import { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import { type Answer, problemAnswer, resultAnswer, send, withEntityTag } from './answer.js';
import type { DatabaseAvailability } from './availability.js';
import { bodyFieldRules } from './body-fields.js';
import { checkIfMatch, getRoutes } from './conditional.js';
import { problemFromError } from './errors.js';
import { idempotency, recordAnswer, type Claim } from './idempotency.js';
import { operationsOf, type Operation } from './operations.js';
import { pagingHeaders } from './paging.js';
import { checkedOutput } from './response.js';
import type { TrpcContext } from './trpc.js';
import type { Executor } from '../db/sql.js';

// The API's one handler (issue 26): trpc-to-openapi finds the procedure of a method and path (its route
// matching, `createProcedureCache`) and documents the router; the call goes through tRPC's public
// `createCaller`, and everything around it happens here, in this order, on values:
// 1. If-Match on PATCH/DELETE (412, conditional.ts) and the Idempotency-Key of a POST (a stored answer is
//    replayed, idempotency.ts);
// 2. the procedure runs with the body express.json read (body.ts) or the query, and the path's parameters;
// 3. its result becomes the answer: the success status of its meta, 204 without body, a file, JSON text
//    PostgreSQL wrote as it is, an explicit output check where output checks are on (response.ts), the paging
//    headers; any failure becomes problem+json (errors.ts);
// 4. a GET or PATCH 200 gets its ETag, a matching If-None-Match a 304; a claimed Idempotency-Key stores the
//    answer; the answer is written once.

export type ApiDeps = {
  log: Logger;
  db: Executor;
  availability?: DatabaseAvailability;
};

/** What the request's context needs from the app: built per call (the If-Match read gets its own). */
export type RequestScope = {
  buildContext: () => TrpcContext;
  tenantSchema: string;
  tokenId: string | null;
  withToken: boolean;
};

type Found = { op: Operation; pathInput: Record<string, string> };

export function apiHandler(router: AnyRouter, deps: ApiDeps) {
  const { log, availability } = deps;
  const byPath = new Map(operationsOf(router).map((op) => [op.path, op]));
  const find = createProcedureCache(router as never);
  // D12: every body operation refuses the fields its resource does not have (body-fields.ts, trpc.ts).
  const bodyFields = bodyFieldRules(router);
  const readRoutes = getRoutes(router);

  const locate = (method: string, url: URL): Found | null => {
    const hit = find(method as 'GET', normalizePath(url.pathname));
    const op = hit?.procedure ? byPath.get(hit.procedure.path) : undefined;
    return op && hit ? { op, pathInput: hit.pathInput } : null;
  };

  return async (req: Request, res: Response, scope: RequestScope): Promise<void> => {
    const requestId = String(res.getHeader('X-Request-Id') ?? '');
    const problem = (err: unknown) => problemAnswer(problemFromError(err, req.method, log, requestId, availability), scope.withToken);
    let claim: Claim | null = null;
    let answer: Answer;
    try {
      // Conditional requests and Idempotency-Key, once for every route.
      const path = req.url.split('?')[0]!;
      await checkIfMatch(req, readRoutes, router, path, scope.buildContext);
      const idem = await idempotency(req, { db: deps.db, schema: scope.tenantSchema, tokenId: scope.tokenId, log });
      if (idem && 'replay' in idem) {
        send(res, idem.replay);
        return;
      }
      claim = idem?.claim ?? null;
      if (claim) {
        // A connection closed before any answer was sent: the key is released (nothing to replay).
        const c = claim;
        res.on('close', () => recordAnswer(c, null));
      }
      answer = await run(req, scope);
    } catch (err) {
      answer = problem(err);
    }
    answer = withEntityTag(req.method, req.headers, answer);
    if (claim) recordAnswer(claim, { answer, res });
    send(res, answer);
  };

  async function run(req: Request, scope: RequestScope): Promise<Answer> {
    // The URL as trpc-to-openapi's adapters read it (a request target that is not a path stays absolute).
    const url = new URL(req.url.startsWith('/') ? `http://127.0.0.1${req.url}` : req.url);
    const found = locate(req.method, url);
    if (!found) throw new TRPCError({ code: 'NOT_FOUND', message: 'Not found' });
    const { op, pathInput } = found;
    const input = inputOf(req, url, op, pathInput);
    // The paging headers a list reports travel with its answer (a problem answer has none).
    const headers: Record<string, string> = {};
    const ctx: TrpcContext = {
      ...scope.buildContext(),
      bodyFields,
      paging: (p) => Object.assign(headers, pagingHeaders(p)),
    };
    const caller = router.createCaller(ctx) as Record<string, unknown>;
    const fn = op.path.split('.').reduce<unknown>((acc, k) => (acc as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
    const data = checkedOutput(op.output, await fn(input));
    return resultAnswer(op.meta.successStatus ?? 200, data, headers);
  }
}

/**
 * The procedure's input as trpc-to-openapi's adapters build it: the body (POST, PUT, PATCH) or the query (first
 * value of a repeated parameter, a list where the schema has a list), with the path's parameters over it;
 * `undefined` for a void input.
 */
function inputOf(req: Request, url: URL, op: Operation, pathInput: Record<string, string>): unknown {
  const schema = unwrapZodType((op.input ?? z.object({})) as never, true);
  if (instanceofZodTypeLikeVoid(schema)) return undefined;
  const useBody = req.method !== 'GET' && req.method !== 'DELETE';
  const values = (useBody ? { ...(req.body as object | undefined) } : getQuery(req as never, url)) as Record<string, unknown>;
  if (!useBody && instanceofZodTypeObject(schema)) {
    for (const [key, field] of Object.entries((schema as unknown as z.ZodObject).shape)) {
      const list = field instanceof z.ZodArray || (field instanceof z.ZodOptional && field.unwrap() instanceof z.ZodArray);
      if (list && values[key] !== undefined && !Array.isArray(values[key])) values[key] = [values[key]];
    }
  }
  return { ...values, ...pathInput };
}
