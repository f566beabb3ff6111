import { z } from 'zod';
import { readConfig } from '../config.js';
import { parsedFinalJson } from './final-json.js';

// Spec 1.6: null fields are omitted; lists that apply are always present; the nested lists of plain
// values of an edition's `tasks`, a receipt's `items` and a ledger's `bookEntries` show empty values as null.
const KEEP_NULLS_INSIDE = new Set(['tasks', 'items', 'bookEntries']);

export function omitNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(omitNulls);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;
    out[k] = KEEP_NULLS_INSIDE.has(k) ? v : omitNulls(v);
  }
  return out;
}

/** Wraps a response schema so every resource's output gets the null rule by construction. */
export function response<T extends z.ZodType>(schema: T) {
  return z.preprocess(omitNulls, schema);
}

/** A reference to a record (spec 2.1). */
export const referenceSchema = z.object({
  uuid: z.string().meta({ format: 'uuid' }),
  name: z.string().optional(),
  alias: z.string().optional(),
}).meta({ id: 'Reference', description: 'A reference to another record (spec 2.1).' });

export const timestampOut = () => z.string().meta({ format: 'date-time', example: '2027-07-01T10:00:00+02:00' });

/**
 * Whether responses marked `finalResponse` are checked against their schema at run time (`OUTPUT_CHECKS` on/off;
 * default: on, except with NODE_ENV=production). Tests and development always check.
 */
export function outputChecks(env?: NodeJS.ProcessEnv): boolean {
  const config = readConfig(env);
  return config.outputChecks ?? config.nodeEnv !== 'production';
}

/**
 * For a hot read whose service writes its answer in final form (the null rule applied, every field as the schema
 * says; its tests prove it): the schema serves the OpenAPI document everywhere and checks the answer where
 * output checks are on, but in production the answer passes unchanged. Zod validation and the null rule's walk
 * were ~17 % of the process's CPU for the public offer list (bench/README.md). Its own instance gets parse functions
 * that pass the value unchanged; the zod internals the document is built from stay as they are.
 */
export function finalResponse<T extends z.ZodType>(schema: T, checks = outputChecks()) {
  // Text PostgreSQL wrote (final-json.ts) is checked as what it stands for.
  const own = z.preprocess((v) => omitNulls(parsedFinalJson(v)), schema);
  if (checks) return own;
  const pass = (v: unknown) => v;
  Object.assign(own, {
    parse: pass,
    parseAsync: async (v: unknown) => v,
    safeParse: (v: unknown) => ({ success: true, data: v }),
    safeParseAsync: async (v: unknown) => ({ success: true, data: v }),
  });
  return own;
}
