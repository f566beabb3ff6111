import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { AnyRouter } from '@trpc/server';
import { parse as parseContentDisposition } from 'content-disposition';
import { fileTypeFromBuffer } from 'file-type';
import { answerFileType } from '../../domain/answer-files.js';
import type { RawBodySpec } from './meta.js';
import { operationsOf, templatePattern } from './operations.js';
import { Problem } from './problem.js';

// Bodies and answers that are files, not JSON (issue 21: answer files, D11 "Files"), once for every procedure
// that declares them in its meta:
// - `rawBody: { mediaTypes, maxBytes }`: the request body is the file itself with its Content-Type. It is read
//   here (413 above `maxBytes`; a client that hangs up mid-body stores nothing, app.ts), its type is checked
//   from the content's magic bytes (file-type) against the declared type and `mediaTypes` (415), and it reaches
//   the procedure as the context's `upload` (the JSON input stays `{}`). Its name comes from
//   `Content-Disposition` (`filename*` or `filename`) or the query parameter `name`.
// - `rawResponse: { mediaTypes }`: the procedure returns `rawFile(...)`; the handler sends its bytes with their
//   type as an attachment (answer.ts) (`Content-Disposition: attachment`, the security headers' `nosniff` and CSP apply).

export type { RawBodySpec, RawResponseSpec } from './meta.js';

/** A file sent as a request body: its bytes, the type found in them, the name the client gave. */
export type RawUpload = { bytes: Buffer; mediaType: string; fileName: string | null; digest: string };

type RawRoute = { method: string; re: RegExp; spec: RawBodySpec };

/** The procedures whose body is a file, by method and path template. */
export function rawBodyRoutes(router: AnyRouter): RawRoute[] {
  const out: RawRoute[] = [];
  for (const { meta, method, template } of operationsOf(router)) {
    if (meta.rawBody) out.push({ method, re: templatePattern(template), spec: meta.rawBody });
  }
  return out;
}

/** The raw-body spec of this request's route, if it has one. */
export function rawBodySpecOf(req: Request, routes: readonly RawRoute[]): RawBodySpec | null {
  const path = req.url.split('?')[0] ?? '';
  return routes.find((r) => r.method === req.method && r.re.test(path))?.spec ?? null;
}

const mediaTypeOf = (header: string | undefined) => header?.split(';')[0]?.trim().toLowerCase() || null;

/** The file's name: Content-Disposition's `filename*`/`filename`, else `?name=`; null when neither is sent. */
function fileNameOf(req: Request): string | null {
  // The parser is lenient: a header without a readable filename names nothing, and `?name=` or the default applies.
  const header = req.headers['content-disposition'];
  const name = header ? parseContentDisposition(header).parameters.filename : undefined;
  if (name) return name;
  const query = new URL(req.url, 'http://x').searchParams.get('name');
  return query || null;
}

/**
 * Checks a file body read under `spec` and hands it on as `upload`: empty is 422, a type that is not declared
 * as one of `mediaTypes` or whose content is not what it says is 415.
 */
export async function acceptRawBody(req: Request, spec: RawBodySpec, bytes: Buffer): Promise<RawUpload> {
  const declared = mediaTypeOf(req.headers['content-type']);
  const fileName = fileNameOf(req);
  if (bytes.length === 0) throw new Problem(422, 'The request body is empty; send the file itself as the body.');
  const detected = (await fileTypeFromBuffer(bytes))?.mime ?? null;
  const verdict = answerFileType(declared, detected, spec.mediaTypes);
  if (!verdict.ok) throw new Problem(415, verdict.reason);
  return { bytes, mediaType: verdict.mimeType, fileName, digest: createHash('sha256').update(bytes).digest('base64url') };
}

export function rawUploadOf(req: Request): RawUpload | undefined {
  return (req as { rawUpload?: RawUpload }).rawUpload;
}

export function setRawUpload(req: Request, upload: RawUpload): void {
  (req as { rawUpload?: RawUpload }).rawUpload = upload;
}

// ---- a file as the answer ---------------------------------------------------------------------------------

export class RawFile {
  constructor(readonly bytes: Buffer, readonly mediaType: string, readonly fileName: string) {}
}

/** `bytes` as the answer of a procedure with `rawResponse` (sent by answer.ts), typed as its output. */
export function rawFile<T>(bytes: Buffer, mediaType: string, fileName: string): T {
  return new RawFile(bytes, mediaType, fileName) as unknown as T;
}
