import type { AnyRouter } from '@trpc/server';
import { z } from 'zod';
import { invalid, violation, type Violation } from '../../domain/errors.js';
import { operationsOf } from './operations.js';
import { propertyPath, violationsFromZod } from './validation.js';
import { declaredSchemaOf } from './response.js';

// D12, issue 22.3: a body field the resource does not have, neither writable (the operation's input) nor
// returned by it (its output: `uuid`, `createdAt`, `transitions`, …), is refused: 422 with `<field>: unknown
// field` per field, nested ones named like `dates[0].begn`. Read-only fields stay ignored, so a client may send
// back what it read. Derived once from every body operation's own input and output schemas, and applied by the
// procedure builder (trpc.ts) after the access check, so no resource can leave it out.

/** What a body may hold at one place: the fields of an object, the items of a list, the values of a map. */
type Shape =
  | { kind: 'object'; fields: Map<string, Shape | null>; open: boolean }
  | { kind: 'array'; element: Shape | null }
  | { kind: 'record'; values: Shape | null }
  | { kind: 'value' };

type Def = { type: string; [k: string]: unknown };
/** A schema's definition through zod's public `def` (zod 4 classic). */
const defOf = (schema: unknown): Def | undefined => (schema instanceof z.ZodType ? (schema.def as unknown as Def) : undefined);

/** The shape a zod schema accepts (null where it says nothing about fields: transforms, `any`). */
function shapeOf(schema: unknown, depth = 0): Shape | null {
  const def = defOf(schema);
  if (!def || depth > 32) return null;
  const inner = (s: unknown) => shapeOf(s, depth + 1);
  switch (def.type) {
    case 'object': {
      const fields = new Map<string, Shape | null>();
      for (const [k, s] of Object.entries((def.shape as Record<string, unknown> | undefined) ?? {})) fields.set(k, inner(s));
      const catchall = defOf(def.catchall);
      return { kind: 'object', fields, open: !!catchall && catchall.type !== 'never' };
    }
    case 'array': return { kind: 'array', element: inner(def.element) };
    case 'record': return { kind: 'record', values: inner(def.valueType) };
    case 'pipe': return merge(inner(def.in), inner(def.out));
    case 'union': return (def.options as unknown[]).map(inner).reduce<Shape | null>(merge, null);
    case 'intersection': return merge(inner(def.left), inner(def.right));
    case 'lazy': return inner((def.getter as () => unknown)());
    case 'optional': case 'nullable': case 'default': case 'prefault': case 'nonoptional': case 'readonly': case 'catch': case 'success':
      return inner(def.innerType);
    case 'transform': case 'any': case 'unknown': case 'custom':
      return null;
    default:
      return { kind: 'value' };
  }
}

function merge(a: Shape | null, b: Shape | null): Shape | null {
  if (!a || a.kind === 'value') return b ?? a;
  if (!b || b.kind === 'value') return a;
  if (a.kind === 'object' && b.kind === 'object') {
    const fields = new Map(a.fields);
    for (const [k, s] of b.fields) fields.set(k, fields.has(k) ? merge(fields.get(k)!, s) : s);
    return { kind: 'object', fields, open: a.open || b.open };
  }
  if (a.kind === 'array' && b.kind === 'array') return { kind: 'array', element: merge(a.element, b.element) };
  if (a.kind === 'record' && b.kind === 'record') return { kind: 'record', values: merge(a.values, b.values) };
  return a.kind === 'object' ? a : b.kind === 'object' ? b : a;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The unknown fields of `value`: `writable` is what the operation reads, `readable` what the resource returns. */
function unknownFields(value: unknown, writable: Shape | null, readable: Shape | null, path: (string | number)[], out: Violation[]): void {
  if (Array.isArray(value)) {
    if (writable?.kind !== 'array') return;
    const element = readable?.kind === 'array' ? readable.element : null;
    value.forEach((v, i) => unknownFields(v, writable.element, element, [...path, i], out));
    return;
  }
  if (!isObject(value) || !writable) return;
  if (writable.kind === 'record') {
    for (const [k, v] of Object.entries(value)) unknownFields(v, writable.values, readable?.kind === 'record' ? readable.values : null, [...path, k], out);
    return;
  }
  if (writable.kind !== 'object' || writable.open) return;
  const returned = readable?.kind === 'object' ? readable : null;
  for (const [k, v] of Object.entries(value)) {
    if (writable.fields.has(k)) unknownFields(v, writable.fields.get(k)!, returned?.fields.get(k) ?? null, [...path, k], out);
    else if (!returned?.fields.has(k) && !returned?.open) out.push(violation(propertyPath([...path, k]), 'unknown field', 'unknownField'));
  }
}

type Rule = { input: z.ZodType; writable: Shape | null; readable: Shape | null };

/** Procedure path -> what its body may hold; built once per router. */
export type BodyFieldRules = ReadonlyMap<string, Rule>;

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

export function bodyFieldRules(router: AnyRouter): BodyFieldRules {
  const rules = new Map<string, Rule>();
  for (const { path, meta, method, input, inputCount, output } of operationsOf(router)) {
    // Writes only: a PATCH that exists to answer 405 (receipts, bookings) keeps its 405.
    if (!BODY_METHODS.has(method) || meta.access !== 'write' || !input || inputCount > 1) continue;
    rules.set(path, { input: input as z.ZodType, writable: shapeOf(input), readable: shapeOf(declaredSchemaOf(output)) });
  }
  return rules;
}

/**
 * Throws the 422 for a body with unknown fields, its other problems included in the same answer (the
 * operation's own validation of the rest), so a client fixes everything at once. A malformed identifier in the
 * path keeps its 404: the input is then left to the procedure's own parsing.
 */
export async function refuseUnknownFields(rules: BodyFieldRules | undefined, path: string, rawInput: () => Promise<unknown>): Promise<void> {
  const rule = rules?.get(path);
  if (!rule) return;
  const raw = await rawInput();
  const unknown: Violation[] = [];
  unknownFields(raw, rule.writable, rule.readable, [], unknown);
  if (unknown.length === 0) return;
  const parsed = await rule.input.safeParseAsync(raw);
  if (!parsed.success && parsed.error.issues.some((i) => i.path.length === 1 && (i.path[0] === 'uuid' || i.path[0] === 'id'))) return;
  throw invalid([...(parsed.success ? [] : violationsFromZod(parsed.error.issues)), ...unknown]);
}
