import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { AnyRouter } from '@trpc/server';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { DomainError } from '../../domain/errors.js';
import { operationsOf, templatePattern } from './operations.js';
import { Problem } from './problem.js';
import type { TrpcContext } from './trpc.js';

// Conditional requests (issue 13; RFC 9110 section 13), once for every route:
// - every 200 answer to GET (single records and lists) and to PATCH carries a weak `ETag` computed over the
//   response body: `W/"<base64url SHA-256, 22 characters>"`. The body is what this caller sees, so the tag
//   differs between callers who see different fields (an organiser, an anonymous caller).
// - `If-None-Match` on a GET: when one of its tags (or `*`) matches, 304 without a body (ETag, Cache-Control
//   and Vary kept). Both are applied to the answer as a value (answer.ts `withEntityTag`, with `fresh`).
// - `If-Match` on PATCH and DELETE: the current representation is read through the GET procedure of the same
//   path, for the same caller; when none of the sent tags matches its ETag the answer is 412 problem+json and
//   nothing is changed. Tags compare by their opaque value, `W/` ignored (our tags are weak, and RFC 9110's
//   strong comparison would never match them). A record the GET cannot read (404, 403) leaves the request to
//   its own answer. The check and the write are not one transaction: two writers with the same tag can both
//   pass when they arrive at the same instant (optimistic check, as with most APIs).

export function etagOf(body: string | Buffer): string {
  return `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** The opaque tags of an If-Match / If-None-Match header (`*` stays `*`). */
export function parseTagList(header: string | undefined): string[] {
  if (!header) return [];
  const out: string[] = [];
  const re = /\s*(\*|(?:W\/)?"[^"]*")\s*(?:,|$)/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(header)) && m[0] !== '') out.push(m[1] === '*' ? '*' : m[1].replace(/^W\//, ''));
  return out;
}

/** Whether `etag` is among the sent tags (weak comparison; `*` matches any current representation). */
export function tagMatches(tags: readonly string[], etag: string): boolean {
  const opaque = etag.replace(/^W\//, '');
  return tags.some((t) => t === '*' || t === opaque);
}

type GetRoute = { re: RegExp; names: string[]; procedure: string; method: string; writes: boolean };

/**
 * The router's procedures by method and path template: GET ones to read the current representation of a
 * path, PATCH/DELETE ones to know whether the path really writes (those that only answer 405 do not).
 */
export function getRoutes(router: AnyRouter): GetRoute[] {
  const out: GetRoute[] = [];
  for (const { path, meta, method, template } of operationsOf(router)) {
    if (!['GET', 'PATCH', 'DELETE'].includes(method)) continue;
    const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    out.push({ re: templatePattern(template, true), names, procedure: path, method, writes: meta.access === 'write' });
  }
  return out;
}

/**
 * For PATCH and DELETE with If-Match: 412 unless the current representation (the GET of the same path, for
 * this caller) has one of the sent tags. `path` is below the base path, without the query.
 */
export async function checkIfMatch(
  req: Request, routes: GetRoute[], router: AnyRouter, path: string, buildContext: () => TrpcContext,
): Promise<void> {
  if (req.method !== 'PATCH' && req.method !== 'DELETE') return;
  const header = req.headers['if-match'] as string | undefined;
  if (header === undefined) return;
  const tags = parseTagList(header);
  if (tags.length === 0) throw new Problem(400, 'If-Match: expected "*" or a list of entity tags such as W/"…".');
  // Only a path that really writes is checked (a PATCH that only answers 405 keeps its 405).
  if (!routes.some((r) => r.method === req.method && r.writes && r.re.test(path))) return;
  let route: GetRoute | undefined;
  let m: RegExpExecArray | null = null;
  for (const r of routes) {
    if (r.method !== 'GET') continue;
    m = r.re.exec(path);
    if (m) {
      route = r;
      break;
    }
  }
  if (!route || !m) return;
  const input: Record<string, string> = {};
  route.names.forEach((n, i) => {
    input[n] = decodeURIComponent(m![i + 1]);
  });
  let current: unknown;
  try {
    const caller = router.createCaller(buildContext()) as Record<string, unknown>;
    const fn = route.procedure.split('.').reduce<unknown>((acc, k) => (acc as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
    current = await fn(input);
  } catch (err) {
    // A record the caller cannot read (404, 403, 401) leaves the write to its own answer. Anything else (a
    // timeout, the database gone) fails the request: the condition was asked for and could not be checked, so
    // the write must not go ahead unconditionally (issue 22).
    if (unreadable(err)) return;
    throw err;
  }
  const etag = etagOf(JSON.stringify(current));
  if (!tagMatches(tags, etag)) {
    throw new Problem(412, `The record was changed since you read it (If-Match does not match its current ETag ${etag}); read it again and retry.`, undefined, { ETag: etag });
  }
}

/** Whether reading the current representation failed because there is none for this caller (not found, not permitted). */
function unreadable(err: unknown): boolean {
  const cause = err instanceof TRPCError && err.cause ? err.cause : err;
  if (cause instanceof DomainError) return cause.code === 'not_found' || cause.code === 'not_permitted';
  if (cause instanceof Problem) return cause.status === 401 || cause.status === 403 || cause.status === 404;
  // A malformed identifier in the path is a 404 (D10), found by the input's own check.
  if (cause instanceof z.ZodError) return err instanceof TRPCError && err.code === 'BAD_REQUEST';
  return err instanceof TRPCError && ['NOT_FOUND', 'FORBIDDEN', 'UNAUTHORIZED'].includes(err.code);
}
