import type { AnyRouter } from '@trpc/server';
import { getInputOutputParsers, type OpenApiProcedure } from 'trpc-to-openapi';
import type { Meta } from './meta.js';

// The router's operations, read once per router through public surfaces only (issue 26): a built tRPC router
// carries its procedures as its own properties (`appRouter.offers.list`, tRPC's `BuiltRouter = Router & TRecord`),
// each procedure its meta (`procedure.meta`), and trpc-to-openapi's `getInputOutputParsers` gives its input and
// output schemas. Everything the HTTP layer decides from the router (routes, 405s, raw bodies, If-Match, body
// fields, the document's post-processing, the access words of the log) reads this list, never `router._def`.

export type Operation = {
  /** The procedure's path in the router (`offers.list`): the caller's path. */
  path: string;
  meta: Meta;
  /** The REST method and path template of its meta (`GET`, `/offers/{uuid}`). */
  method: string;
  template: string;
  /** The input schema (the merged object when several were declared), `undefined` without `.input()`. */
  input: unknown;
  /** How many inputs the procedure declares. */
  inputCount: number;
  /** The declared output schema. */
  output: unknown;
  procedure: OpenApiProcedure;
};

/** The keys a built router adds beside its procedures. */
const ROUTER_KEYS = new Set(['_def', 'createCaller']);

const cache = new WeakMap<object, Operation[]>();

/** Every procedure of `router` that has an OpenAPI method and path, in the router's order. */
export function operationsOf(router: AnyRouter): Operation[] {
  const known = cache.get(router);
  if (known) return known;
  const out: Operation[] = [];
  const walk = (record: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(record)) {
      if (!prefix && ROUTER_KEYS.has(key)) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      if (typeof value === 'function') {
        const procedure = value as OpenApiProcedure;
        const meta = procedure.meta as Meta | undefined;
        if (!meta?.openapi || meta.openapi.enabled === false) continue;
        const { inputParser, outputParser, hasInputsDefined } = getInputOutputParsers(procedure);
        out.push({
          path, meta, method: meta.openapi.method, template: meta.openapi.path,
          input: hasInputsDefined ? inputParser : undefined,
          inputCount: hasInputsDefined ? countInputs(procedure) : 0,
          output: outputParser, procedure,
        });
      } else if (value && typeof value === 'object') {
        walk(value as Record<string, unknown>, path);
      }
    }
  };
  walk(router as unknown as Record<string, unknown>, '');
  cache.set(router, out);
  return out;
}

/** 1 unless the procedure merges several inputs (trpc-to-openapi then merges them into one object). */
function countInputs(procedure: OpenApiProcedure): number {
  // The merged parser of several inputs is a new object; one input is returned as declared.
  const { inputParser } = getInputOutputParsers(procedure);
  return getInputOutputParsers(procedure).inputParser === inputParser ? 1 : 2;
}

/** A path template as a regular expression over a request path below the base path (`{x}` one segment). */
export function templatePattern(template: string, group = false): RegExp {
  const names: string[] = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_, n: string) => {
    names.push(n);
    return group ? '([^/]+)' : '[^/]+';
  });
  return new RegExp(`^${pattern}/?$`);
}
