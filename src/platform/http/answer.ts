import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { create as contentDisposition } from 'content-disposition';
import fresh from 'fresh';
import { etagOf } from './conditional.js';
import type { RenderedProblem } from './errors.js';
import { FinalJson } from './final-json.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';
import { RawFile } from './raw.js';

// The answer as a value (issue 26): what a request gets back is built here as `Answer`, status, headers and
// body, from a procedure's result, a problem or a stored idempotent answer, then written once by `send`. Headers
// set before (security headers, X-Request-Id, RateLimit, Vary, Cache-Control) stay on the response; the answer
// adds its own. Nothing replaces `res.end`, so a later `res.write` or compression cannot bypass a step.

export type Answer = {
  status: number;
  headers: Record<string, string>;
  /** Absent for 204, 304 and a stored answer without body. */
  body?: string | Buffer;
};

export const JSON_CONTENT_TYPE = 'application/json';

/**
 * A procedure's result as the answer: `status` from its meta (spec 1.11), 204 without a body, a file
 * (`rawFile`, raw.ts) as an attachment of its own type, JSON text PostgreSQL wrote (`finalJson`) as it is,
 * anything else as JSON. `headers`: what the procedure reported on the way (the paging headers).
 */
export function resultAnswer(status: number, data: unknown, headers: Record<string, string>): Answer {
  if (status === 204) return { status, headers };
  if (data instanceof RawFile) {
    return {
      status,
      headers: {
        ...headers,
        'Content-Type': data.mediaType,
        'Content-Disposition': contentDisposition(data.fileName, { type: 'attachment' }),
        'Content-Length': String(data.bytes.length),
      },
      body: data.bytes,
    };
  }
  const body = data instanceof FinalJson ? data.text : JSON.stringify(data);
  return { status, headers: { ...headers, 'Content-Type': JSON_CONTENT_TYPE }, body };
}

/**
 * A problem (errors.ts) as the answer: application/problem+json, never cached (spec 1.10: private for a token),
 * with the problem's own headers (WWW-Authenticate, Retry-After, Allow, ETag of a 412).
 */
export function problemAnswer(problem: RenderedProblem, withToken: boolean): Answer {
  return {
    status: problem.body.status,
    headers: { ...problem.headers, 'Cache-Control': withToken ? 'private, no-store' : 'no-store', 'Content-Type': PROBLEM_CONTENT_TYPE },
    body: JSON.stringify(problem.body),
  };
}

/**
 * Conditional GET (issue 13; RFC 9110 13): a 200 answer to GET or PATCH gets a weak ETag over its body (what
 * this caller sees: `W/"<base64url SHA-256, 22 characters>"`), and a GET whose If-None-Match matches it is
 * answered 304 without a body (the `fresh` package decides, as express does for its own answers).
 */
export function withEntityTag(method: string, requestHeaders: IncomingHttpHeaders, answer: Answer): Answer {
  if (answer.status !== 200 || answer.body === undefined || (method !== 'GET' && method !== 'PATCH')) return answer;
  // Encoded to UTF-8 once, for the hash and the socket alike (a 200-offer page is ~350 KB; encoding it twice
  // showed in the page's profile).
  const body = typeof answer.body === 'string' ? Buffer.from(answer.body, 'utf8') : answer.body;
  const etag = etagOf(body);
  if (method === 'GET' && fresh(requestHeaders, { etag })) {
    const headers: Record<string, string> = { ...answer.headers, ETag: etag };
    delete headers['Content-Type'];
    delete headers['Content-Length'];
    return { status: 304, headers };
  }
  return { status: answer.status, headers: { ...answer.headers, ETag: etag }, body };
}

/** The value of header `name` the answer will carry: its own, else what the response already holds. */
export function headerOf(res: ServerResponse, answer: Answer, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(answer.headers)) if (k.toLowerCase() === lower) return v;
  const v = res.getHeader(name);
  return v === undefined ? undefined : String(v);
}

/** Writes the answer: status, its headers, and the body in one `end`. */
export function send(res: ServerResponse, answer: Answer): void {
  res.statusCode = answer.status;
  for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  if (answer.body === undefined) res.end();
  else res.end(answer.body);
}
