import { UNUSED_UPLOAD_HOURS } from '../../domain/answer-files.js';
import type { UploadState } from '../../domain/family-applications.js';
import { anyOf, inSchema, sql, tablesOf, type Executor, type RawBuilder } from '../../platform/db/sql.js';

// Answer files (spec 2.2 `files`, D11 "Files"; issue 21 item 6) as the resources that use them see them: the
// files resource stores and serves them, a family's application and the team's PATCH attach them to an
// application through `file` answers, the projection lists them, retention deletes them. They are rows of the
// municipality's schema (table `files`, content in `bytea`), so its backup and export hold them.
// - attached: `attendance_uuid` names the application (deleted with it: cascade, which covers a delete, a
//   transfer's old application and a child deleted with its applications);
// - unused: no application yet; deleted after UNUSED_UPLOAD_HOURS by the tenant's family job.

/** An application's answer files as spec 2.2 lists them, a json array for the projection of `a` (attendances). */
export function filesJsonSql(schema: string, a = 'a'): RawBuilder<unknown> {
  return sql`coalesce((select json_agg(json_build_object('uuid', f.uuid, 'question', f.question_uuid, 'name', f.name,
      'mimeType', f.mime_type, 'size', f.size) order by f.created_at, f.uuid)
    from ${tablesOf(schema)('files')} f where f.attendance_uuid = ${sql.ref(`${a}.uuid`)}), '[]'::json)`;
}

/** Uploads by uuid: who uploaded them and whether an application uses them. Only those that exist. */
export async function uploadsOf(db: Executor, schema: string, uuids: readonly string[]): Promise<Map<string, UploadState & { attendance: string | null }>> {
  if (uuids.length === 0) return new Map();
  const rows = await inSchema(db, schema).selectFrom('files').select(['uuid', 'token_uuid as token', 'attendance_uuid as attendance'])
    .where('uuid', '=', anyOf([...new Set(uuids)])).forUpdate().execute();
  return new Map(rows.map((r) => [r.uuid, { token: r.token, used: r.attendance !== null, attendance: r.attendance }]));
}

/**
 * Makes `files` the answer files of the application: attaches each (its question), detaches and deletes the
 * application's files no answer names any more. Call in the transaction that writes the answers.
 */
export async function setAnswerFiles(db: Executor, schema: string, attendance: string, files: readonly { file: string; question: string }[]): Promise<void> {
  const tx = inSchema(db, schema);
  await tx.deleteFrom('files').where('attendance_uuid', '=', attendance)
    .where((eb) => (files.length === 0 ? eb.lit(true) : eb('uuid', '<>', sql<string>`all(${files.map((f) => f.file)}::uuid[])`))).execute();
  if (files.length === 0) return;
  // Raw: every file's question from `unnest(arrays)` in one statement.
  await sql`update ${tablesOf(schema)('files')} f set attendance_uuid = ${attendance}::uuid, question_uuid = v.question
    from unnest(${files.map((f) => f.file)}::uuid[], ${files.map((f) => f.question)}::uuid[]) as v(file, question)
    where f.uuid = v.file`.execute(db);
}

/** Deletes the answer files of these applications (D9 pseudonymisation: file answers go). */
export async function deleteFilesOf(db: Executor, schema: string, attendances: readonly string[]): Promise<number> {
  if (attendances.length === 0) return 0;
  const res = await inSchema(db, schema).deleteFrom('files').where('attendance_uuid', '=', anyOf(attendances)).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes uploads that no application used within UNUSED_UPLOAD_HOURS; returns how many. */
export async function purgeUnusedUploads(db: Executor, schema: string, now: Date = new Date()): Promise<number> {
  const before = new Date(now.getTime() - UNUSED_UPLOAD_HOURS * 3_600_000);
  const res = await inSchema(db, schema).deleteFrom('files').where('attendance_uuid', 'is', null)
    .where('created_at', '<', before.toISOString()).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The condition "this tenant has unused uploads to delete" for the family job's sweep (one union over schemas). */
export function unusedUploadsDueSql(schema: string): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from ${tablesOf(schema)('files')} f
    where f.attendance_uuid is null and f.created_at < now() - make_interval(hours => ${UNUSED_UPLOAD_HOURS}))`;
}
