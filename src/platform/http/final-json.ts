// An answer whose JSON text PostgreSQL wrote in its final form (issue 10.2: the public offer page): sent as it
// is, without a parse into objects and a JSON.stringify back. The service returns `finalJson(text)` typed as
// the answer; the API's handler (api.ts, answer.ts) sends the text where output checks are off, and checks
// what it stands for against the schema where they are on (`finalResponse`, response.ts), so the tests prove
// the SQL writes exactly the answer.

export class FinalJson {
  constructor(readonly text: string) {}

  /** Anything else that serialises it gets the value the text stands for. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** `text` (a JSON document) as the answer of type `T`. */
export function finalJson<T>(text: string): T {
  return new FinalJson(text) as unknown as T;
}

/** For the output check: the value the text stands for. */
export function parsedFinalJson(value: unknown): unknown {
  return value instanceof FinalJson ? JSON.parse(value.text) : value;
}
