import { answerFileName, type AnswerFileType } from '../../domain/answer-files.js';
import { notFound, unprocessable } from '../../domain/errors.js';
import { assertListReadable } from '../../engines/access/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema } from '../../platform/db/sql.js';
import { newUuid } from '../../platform/http/ids.js';
import { rawFile, type RawUpload } from '../../platform/http/raw.js';
import type { AnswerFileOut } from './schema.js';

// D11 "Files": `POST /files` (website tokens and admins) stores an answer file in the municipality's schema;
// `GET /files/{uuid}` serves it to admins, and to organisers who may read the application it answers. The
// body's size, type and name were checked where it was read (src/platform/http/raw.ts).

const fileNotFound = (uuid: string) => notFound(`No file with the identifier ${uuid} exists, or you may not see it.`);

/** Stores an upload; it belongs to the token that sent it until an application's answer names it. */
export async function uploadFile(ctx: ServiceContext, upload: RawUpload | undefined): Promise<AnswerFileOut> {
  if (!upload) throw unprocessable('The request body must be the file itself, with its Content-Type.');
  const mimeType = upload.mediaType as AnswerFileType;
  const uuid = newUuid();
  const name = answerFileName(upload.fileName, mimeType);
  const token = ctx.viewer.kind === 'admin' || ctx.viewer.kind === 'website' ? ctx.viewer.actor.tokenId : null;
  await inSchema(dbOf(ctx.em), ctx.tenant.schema).insertInto('files')
    .values({ uuid, token_uuid: token, name, mime_type: mimeType, size: upload.bytes.length, content: upload.bytes }).execute();
  return { uuid, name, mimeType, size: upload.bytes.length };
}

/**
 * The file's bytes as an attachment. Admins (and the system) read every file of the municipality; organisers
 * only files answering an application whose participant list they may read (D10), else 404/403 as for it.
 */
export async function getFile(ctx: ServiceContext, uuid: string): Promise<unknown> {
  const db = dbOf(ctx.em);
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('files as f').leftJoin('attendances as a', 'a.uuid', 'f.attendance_uuid')
    .select(['f.name', 'f.mime_type as mimeType', 'f.content', 'a.offer_uuid as offer'])
    .where('f.uuid', '=', uuid).executeTakeFirst();
  if (!row) throw fileNotFound(uuid);
  if (ctx.viewer.kind !== 'admin' && ctx.viewer.kind !== 'system') {
    if (!row.offer) throw fileNotFound(uuid);
    await assertListReadable(ctx, db, row.offer, () => fileNotFound(uuid));
  }
  return rawFile(row.content, row.mimeType, row.name);
}

