import type { Request, Response } from 'express';
import { createOpenApiExpressMiddleware } from 'trpc-to-openapi';
import type { AnyRouter } from '@trpc/server';
import type { Logger } from '../logging/logger.js';
import type { DatabaseAvailability } from './availability.js';
import { bodyFieldRules } from './body-fields.js';
import { problemFromError } from './errors.js';
import { resolveFinalJson } from './final-json.js';
import { resolveRawFile } from './raw.js';
import { PAGING_HEADERS } from './paging.js';
import { PROBLEM_CONTENT_TYPE, type ProblemBody } from './problem.js';
import type { Meta, TrpcContext } from './trpc.js';

// The thin layer around trpc-to-openapi (stack notes): success statuses from each procedure's meta,
// every error rendered as problem+json without the adapter's extra `message`/`code`/`issues`, and a 204
// without a body. The express request carries the tenant-bound context built by the app.
type HpRequest = Request & { hp?: { buildContext: () => TrpcContext; problem?: { body: ProblemBody; headers: Record<string, string> } } };

/**
 * trpc-to-openapi sets zod's `coerce` flag on every number and boolean of an input object, bodies included,
 * so `"false"` would become true and `"5"` a number. Bodies must keep JSON's types (422 otherwise) and
 * query values are read as strings by our own fields, so the flag is pinned off once, at start.
 */
type ZodDef = {
  type?: string; shape?: Record<string, unknown>; element?: unknown; in?: unknown; out?: unknown; options?: unknown[];
  left?: unknown; right?: unknown; valueType?: unknown; items?: unknown[]; innerType?: unknown;
};

function pinCoercionOff(schema: unknown, seen = new Set<unknown>()): void {
  const def = (schema as { _zod?: { def?: ZodDef } })?._zod?.def;
  if (!def || seen.has(def)) return;
  seen.add(def);
  switch (def.type) {
    case 'number': case 'boolean': case 'bigint': case 'date':
      if (!Object.getOwnPropertyDescriptor(def, 'coerce')?.get) {
        Object.defineProperty(def, 'coerce', { get: () => false, set: () => {}, configurable: false });
      }
      return;
    case 'object':
      for (const s of Object.values(def.shape ?? {})) pinCoercionOff(s, seen);
      return;
    case 'array': return pinCoercionOff(def.element, seen);
    case 'pipe': pinCoercionOff(def.in, seen); return pinCoercionOff(def.out, seen);
    case 'union': for (const o of def.options ?? []) pinCoercionOff(o, seen); return;
    case 'intersection': pinCoercionOff(def.left, seen); return pinCoercionOff(def.right, seen);
    case 'record': return pinCoercionOff(def.valueType, seen);
    case 'tuple': for (const i of def.items ?? []) pinCoercionOff(i, seen); return;
    default:
      if (def.innerType) pinCoercionOff(def.innerType, seen);
  }
}

export function openApiHandler(router: AnyRouter, log: Logger, availability?: DatabaseAvailability) {
  for (const proc of Object.values(router._def.procedures as Record<string, { _def: { inputs?: unknown[] } }>)) {
    for (const input of proc._def.inputs ?? []) pinCoercionOff(input);
  }
  // D12: every body operation refuses the fields its resource does not have (body-fields.ts, trpc.ts).
  const bodyFields = bodyFieldRules(router);
  const statusByPath = new Map<string, number>();
  for (const [path, proc] of Object.entries(router._def.procedures as Record<string, { _def: { meta?: Meta } }>)) {
    const s = proc._def.meta?.successStatus;
    if (s) statusByPath.set(path, s);
  }

  const handler = createOpenApiExpressMiddleware({
    router,
    createContext: ({ req }: { req: HpRequest }): TrpcContext => ({ ...req.hp!.buildContext(), bodyFields }),
    responseMeta: ({ paths, errors }: { paths?: string[]; errors: unknown[] }) => {
      if (errors.length > 0) return {};
      const status = paths?.[0] ? statusByPath.get(paths[0]) : undefined;
      return status ? { status } : {};
    },
    onError: ({ error, req }: { error: unknown; req: HpRequest }) => {
      req.hp!.problem = problemFromError(error, req.method, log, (req as { id?: string }).id, availability);
    },
    maxBodySize: 1024 * 1024,
  } as never);

  return (req: HpRequest, res: Response) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    (res as { end: unknown }).end = (...args: unknown[]) => {
      const problem = req.hp?.problem;
      if (problem) {
        res.statusCode = problem.body.status;
        res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
        for (const h of PAGING_HEADERS) res.removeHeader(h);
        if (String(res.getHeader('Cache-Control') ?? '').startsWith('public')) res.setHeader('Cache-Control', 'no-store');
        for (const [k, v] of Object.entries(problem.headers)) res.setHeader(k, v);
        return end(JSON.stringify(problem.body));
      }
      if (res.statusCode === 204) {
        res.removeHeader('Content-Type');
        return end();
      }
      return end(resolveRawFile(res, resolveFinalJson(args[0])), ...args.slice(1));
    };
    return handler(req, res);
  };
}
