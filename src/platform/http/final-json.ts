// An answer whose JSON text PostgreSQL wrote in its final form (issue 10.2: the public offer page): sent as it
// is, without a parse into objects and a JSON.stringify back. The service returns `finalJson(text)` typed as
// the answer; tRPC hands it on untouched where output checks are off (`finalResponse`, response.ts), and the
// adapter's JSON.stringify meets its toJSON, which leaves a placeholder that `resolveFinalJson` swaps for the
// text as the body is ended (openapi-adapter.ts). Where output checks are on (tests, development) the text is
// parsed and checked against the schema first, so the tests prove the SQL writes exactly the answer.

const PLACEHOLDER = '__final_json__:';
// The adapter stringifies and ends in one synchronous step, so one slot is enough; a text never sent (nothing
// ends after the stringify) is replaced by the next one instead of piling up.
let pending: { key: string; text: string } | null = null;
let next = 0;

export class FinalJson {
  constructor(readonly text: string) {}

  /** Called by the adapter's JSON.stringify, just before the body is ended (the same tick). */
  toJSON(): string {
    const key = `${PLACEHOLDER}${next++}`;
    pending = { key, text: this.text };
    return key;
  }
}

/** `text` (a JSON document) as the answer of type `T`. */
export function finalJson<T>(text: string): T {
  return new FinalJson(text) as unknown as T;
}

/** The body to send for `body` as the adapter serialised it: the final JSON text in place of its placeholder. */
export function resolveFinalJson(body: unknown): unknown {
  if (typeof body !== 'string' || !body.startsWith(`"${PLACEHOLDER}`)) return body;
  const slot = pending;
  if (!slot || body !== `"${slot.key}"`) return body;
  pending = null;
  return slot.text;
}

/** For the output check: the value the text stands for. */
export function parsedFinalJson(value: unknown): unknown {
  return value instanceof FinalJson ? JSON.parse(value.text) : value;
}
