import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { createSchema } from 'zod-openapi';
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

type FinalForm = { checked: z.ZodType; checks: boolean };
const finalForms = new WeakMap<object, FinalForm>();
/** The named schemas (`meta({ id })`) the final forms' renderings refer to, for the document's components. */
const finalComponents: Record<string, unknown> = {};

/** The components the final forms' schemas refer to (`#/components/schemas/<id>`), once rendered. */
export function finalResponseComponents(): Readonly<Record<string, unknown>> {
  return finalComponents;
}

/**
 * For a hot read whose service writes its answer in final form (the null rule applied, every field as the schema
 * says; its tests prove it): tRPC does not check it (the declared output is `unknown`), the API's handler does,
 * explicitly, where output checks are on (`checkedOutput`, called by api.ts), and in production the answer passes
 * unchanged. Zod validation and the null rule's walk were ~17 % of the process's CPU for the public offer list
 * (bench/README.md). The OpenAPI document shows `schema` all the same: zod-openapi renders it in place of the
 * `unknown` through its documented `override` meta.
 */
export function finalResponse<T extends z.ZodType>(schema: T, checks = outputChecks()): z.ZodType<z.output<T>> {
  // Text PostgreSQL wrote (final-json.ts) is checked as what it stands for.
  const checked = z.preprocess((v) => omitNulls(parsedFinalJson(v)), schema);
  const declared = z.unknown().meta({
    override: (ctx: { jsonSchema: Record<string, unknown> }) => {
      const rendered = createSchema(checked, { io: 'output' });
      Object.assign(ctx.jsonSchema, rendered.schema);
      // A schema with an id is rendered as a $ref: its component must be in the document even where no other
      // operation's schema names it (every offer answer is a final form, issue 25).
      Object.assign(finalComponents, rendered.components);
    },
  });
  finalForms.set(declared, { checked, checks });
  return declared as unknown as z.ZodType<z.output<T>>;
}

/** The schema a final form's answer is checked against (what it stands for), or `output` itself for any other. */
export function declaredSchemaOf(output: unknown): unknown {
  const form = output !== null && typeof output === 'object' ? finalForms.get(output) : undefined;
  return form ? form.checked : output;
}

/**
 * The output check of an answer in final form, where output checks are on: the value `value` stands for, checked
 * and with the null rule applied (a failure is a 500, as tRPC's own output check). Any other output (checked by
 * tRPC already) and any answer where checks are off pass unchanged.
 */
export function checkedOutput(output: unknown, value: unknown): unknown {
  const form = output !== null && typeof output === 'object' ? finalForms.get(output) : undefined;
  if (!form?.checks) return value;
  const result = form.checked.safeParse(value);
  if (!result.success) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'Output validation failed', cause: result.error });
  return result.data;
}
