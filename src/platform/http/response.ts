import { z } from 'zod';

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
