import express, { type NextFunction, type Request, type Response } from 'express';
import { invalid, violation } from '../../domain/errors.js';
import { ClientGone } from './availability.js';
import { badRequest, Problem } from './problem.js';
import { propertyPath } from './validation.js';
import { acceptRawBody, rawBodySpecOf, setRawUpload, type RawBodySpec, type rawBodyRoutes } from './raw.js';

// Spec 1.2 and D10: bodies must be JSON (`application/json`, a UTF-8 charset parameter allowed; PATCH also
// `application/merge-patch+json`); a body without a JSON content type is 415; broken JSON is 400; an
// oversized body is 413; an action without a body needs no content type. Read here once, by express's own
// parsers; the request's headers stay as the client sent them.
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function mediaType(header: string | undefined): string | null {
  if (!header) return null;
  return header.split(';')[0].trim().toLowerCase() || null;
}

/**
 * The path of the first string (value or key) holding U+0000: PostgreSQL's text and jsonb cannot store it, so
 * it is refused here as a malformed value (422) instead of failing in the database (500).
 */
function nulPath(value: unknown, path: (string | number)[] = []): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = nulPath(v, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return [...path, k.replace(/\u0000/g, '')];
    const found = nulPath(v, [...path, k]);
    if (found) return found;
  }
  return null;
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (value === null || typeof value !== 'object') return depth;
  let max = depth + 1;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, depth + 1));
  return max;
}

type Parser = (req: Request, res: Response, next: (err?: unknown) => void) => void;

/** body-parser's errors (http-errors with a `type`) as the problems the spec names. */
function bodyProblem(err: unknown, limit: number): unknown {
  const e = err as { type?: string; charset?: string; encoding?: string };
  switch (e?.type) {
    case 'entity.too.large': return new Problem(413, `The request body is larger than ${limit} bytes.`);
    case 'entity.parse.failed': return badRequest('The request body is not valid JSON.');
    case 'charset.unsupported': return new Problem(415, `The charset "${e.charset}" is not supported; send application/json in UTF-8.`);
    case 'encoding.unsupported': return new Problem(415, `The content encoding "${e.encoding}" is not supported; send the body uncompressed.`);
    case 'request.size.invalid': return badRequest('The request body does not have the length its Content-Length says.');
    // A client that hangs up mid-body: the request never completes (not an error of ours, see app.ts).
    case 'request.aborted': return new ClientGone();
    default: return err;
  }
}

/**
 * Reads the body of POST, PUT and PATCH: JSON through express.json (body-parser), with the spec's checks around
 * it: the content type (415), an object (422), the depth (400) and NUL characters (422); a file body of a
 * `rawBody` route through express.raw with its own limit (raw.ts). Other methods have no body.
 */
export function readBody(limit = MAX_BODY_BYTES, rawRoutes: ReturnType<typeof rawBodyRoutes> = []) {
  // The content type is decided here before (`type` accepts what reaches it); bodies are not decompressed.
  const json: Parser = express.json({ limit, strict: false, inflate: false, type: () => true });
  const bytes: Parser = express.raw({ limit, inflate: false, type: () => true });
  const files = new Map<RawBodySpec, Parser>(rawRoutes.map((r) => [r.spec, express.raw({ limit: r.spec.maxBytes, inflate: false, type: () => true })]));

  return (req: Request, res: Response, next: NextFunction) => {
    if (!BODY_METHODS.has(req.method)) {
      (req as { body?: unknown }).body = undefined;
      return next();
    }
    // A file as the body (raw.ts, issue 21): read to its own limit, checked from its content.
    const file = rawRoutes.length > 0 ? rawBodySpecOf(req, rawRoutes) : null;
    if (file) {
      return files.get(file)!(req, res, (err) => {
        if (err) return next(bodyProblem(err, file.maxBytes));
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        acceptRawBody(req, file, body).then((upload) => {
          setRawUpload(req, upload);
          (req as { body?: unknown }).body = {};
          next();
        }, next);
      });
    }
    const type = mediaType(req.headers['content-type']);
    const isJson = type === 'application/json' || (req.method === 'PATCH' && type === 'application/merge-patch+json');
    if (type && !isJson) return next(new Problem(415, `Content type "${type}" is not supported; send application/json.`));
    if (!type) {
      // An action without a body needs no content type; a body without one is refused.
      return bytes(req, res, (err) => {
        if (err) return next(bodyProblem(err, limit));
        if (Buffer.isBuffer(req.body) && req.body.length > 0) return next(new Problem(415, 'The request has a body but no Content-Type; send application/json.'));
        (req as { body?: unknown }).body = {};
        next();
      });
    }
    json(req, res, (err) => {
      if (err) return next(bodyProblem(err, limit));
      try {
        (req as { body?: unknown }).body = checkedJson(req.body);
        next();
      } catch (e) {
        next(e);
      }
    });
  };
}

/** The spec's checks of a parsed JSON body; none (no body at all) is `{}`. */
function checkedJson(parsed: unknown): unknown {
  if (parsed === undefined) return {};
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Problem(422, 'The request body must be a JSON object.');
  }
  if (depthOf(parsed) > MAX_JSON_DEPTH) throw badRequest(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  const nul = nulPath(parsed);
  if (nul) throw invalid([violation(propertyPath(nul), 'This value must not contain the NUL character (\\u0000).', 'format')]);
  return parsed;
}
