import type { NextFunction, Request, Response } from 'express';
import { invalid, violation } from '../../domain/errors.js';
import { ClientGone } from './availability.js';
import { badRequest, Problem } from './problem.js';
import { propertyPath } from './validation.js';
import { acceptRawBody, rawBodySpecOf, setRawUpload, type rawBodyRoutes } from './raw.js';

// Spec 1.2 and D10: bodies must be JSON (`application/json`, any charset parameter; PATCH also
// `application/merge-patch+json`); a body without a JSON content type is 415; broken JSON is 400; an
// oversized body is 413; an action without a body needs no content type. Parsed here once, so the
// tRPC adapter (which only parses the exact `application/json`) never sees a raw body.
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

export function readBody(limit = MAX_BODY_BYTES, rawRoutes: ReturnType<typeof rawBodyRoutes> = []) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    if (!BODY_METHODS.has(req.method)) {
      (req as { body?: unknown }).body = undefined;
      return next();
    }
    try {
      // A file as the body (raw.ts, issue 21): read to its own limit, checked from its content.
      const file = rawRoutes.length > 0 ? rawBodySpecOf(req, rawRoutes) : null;
      if (file) {
        setRawUpload(req, await acceptRawBody(req, file, await collect(req, file.maxBytes)));
        (req as { body?: unknown }).body = {};
        req.headers['content-type'] = 'application/json';
        return next();
      }
      const raw = await collect(req, limit);
      const type = mediaType(req.headers['content-type']);
      const isJson = type === 'application/json' || (req.method === 'PATCH' && type === 'application/merge-patch+json');
      if (raw.length === 0) {
        if (type && !isJson) throw new Problem(415, `Content type "${type}" is not supported; send application/json.`);
        (req as { body?: unknown }).body = {};
      } else {
        if (!isJson) {
          throw new Problem(415, type
            ? `Content type "${type}" is not supported; send application/json.`
            : 'The request has a body but no Content-Type; send application/json.');
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw.toString('utf8'));
        } catch {
          throw badRequest('The request body is not valid JSON.');
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          throw new Problem(422, 'The request body must be a JSON object.');
        }
        if (depthOf(parsed) > MAX_JSON_DEPTH) throw badRequest(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
        const nul = nulPath(parsed);
        if (nul) throw invalid([violation(propertyPath(nul), 'This value must not contain the NUL character (\\u0000).', 'format')]);
        (req as { body?: unknown }).body = parsed;
      }
      // The adapter checks for the exact JSON type; the body is already parsed.
      req.headers['content-type'] = 'application/json';
      next();
    } catch (err) {
      next(err);
    }
  };
}

export function collect(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return reject(new Problem(413, `The request body is larger than ${limit} bytes.`));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(new Problem(413, `The request body is larger than ${limit} bytes.`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => !failed && resolve(Buffer.concat(chunks)));
    req.on('error', (e) => !failed && reject(e));
    // A client that hangs up mid-body: the request never completes (not an error of ours, see app.ts).
    req.on('close', () => !failed && !req.complete && reject(new ClientGone()));
  });
}
