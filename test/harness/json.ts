// Reading JSON whose shape no type describes (the OpenAPI document, a CLI's JSON output) in tests, without `any`:
// the value stays `unknown`, these read into it the way property access does and fail the test where it does.

/** `value[k1][k2]…`: like property access, it throws when a step reads from undefined or null. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === undefined || v === null) throw new TypeError(`cannot read '${String(key)}' of ${String(v)} (path ${path.join('.')})`);
    v = Reflect.get(Object(v), key);
  }
  return v;
}

/** `value?.[k1]?.[k2]…`: undefined where a step reads from undefined or null. */
export function maybe(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === undefined || v === null) return undefined;
    v = Reflect.get(Object(v), key);
  }
  return v;
}

/** Whether the value is a plain JSON object (narrowing an `unknown` body). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as a plain object (for Object.keys/entries and property reads); throws when it is none. */
export function asRecord(value: unknown, what = 'value'): Record<string, unknown> {
  if (!isRecord(value)) throw new TypeError(`${what} is not an object: ${JSON.stringify(value)?.slice(0, 200)}`);
  return value;
}

/** The value as a list; throws when it is none. */
export function asList(value: unknown, what = 'value'): unknown[] {
  if (!Array.isArray(value)) throw new TypeError(`${what} is not a list: ${JSON.stringify(value)?.slice(0, 200)}`);
  return value;
}
