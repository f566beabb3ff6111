// Answer files (spec 2.2 `files`, D11 "Files"; issue 21 item 6): what may be uploaded, how long an unused
// upload is kept, and the name it is stored under. Which type a file really is comes from its content (the
// files resource reads the magic bytes); these rules decide on what was declared and what was found.

/** The types an answer file may have (D11: PDF, PNG, JPEG). */
export const ANSWER_FILE_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type AnswerFileType = (typeof ANSWER_FILE_TYPES)[number];

/** At most 10 MiB (D11). */
export const MAX_ANSWER_FILE_BYTES = 10 * 1024 * 1024;

/** An upload no application uses is deleted after this long (D11). */
export const UNUSED_UPLOAD_HOURS = 24;

/** A declared type that says "look at the content" rather than naming one. */
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream']);

const EXTENSION: Record<AnswerFileType, string> = { 'application/pdf': 'pdf', 'image/png': 'png', 'image/jpeg': 'jpg' };

export function isAnswerFileType(value: string | null | undefined): value is AnswerFileType {
  return (ANSWER_FILE_TYPES as readonly string[]).includes(value ?? '');
}

/**
 * The type a file is stored with, or why it is refused (415): the content must be one of the `accepted` types
 * (default the three of D11; `detected`, from its magic bytes), and a declared `Content-Type` must name that same
 * type (or be `application/octet-stream`). A PNG sent as `application/pdf`, or an HTML page sent as `image/png`,
 * is refused.
 */
export function answerFileType(declared: string | null, detected: string | null, accepted: readonly string[] = ANSWER_FILE_TYPES):
  { ok: true; mimeType: string } | { ok: false; reason: string } {
  const supported = accepted.join(', ');
  if (!declared) return { ok: false, reason: `The upload has no Content-Type; send one of ${supported}.` };
  if (!GENERIC_TYPES.has(declared) && !accepted.includes(declared)) {
    return { ok: false, reason: `Files of type "${declared.slice(0, 100)}" are not accepted; send one of ${supported}.` };
  }
  if (detected === null || !accepted.includes(detected)) {
    return { ok: false, reason: `The content is not of an accepted type (${supported}); checked from its first bytes.` };
  }
  if (!GENERIC_TYPES.has(declared) && declared !== detected) {
    return { ok: false, reason: `The content is ${detected}, not ${declared} as its Content-Type says.` };
  }
  return { ok: true, mimeType: detected };
}

/**
 * The name a file is kept and served under: the last path segment of what the client sent, without control
 * characters, quotes or slashes, at most 200 characters; `upload.<ext>` when nothing is left.
 */
export function answerFileName(sent: string | null | undefined, type: AnswerFileType): string {
  const base = (sent ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').trim().slice(0, 200);
  return clean && clean !== '.' && clean !== '..' ? clean : `upload.${EXTENSION[type]}`;
}
