import type { OpenApiMeta } from 'trpc-to-openapi';

// What a procedure declares in its meta (trpc.ts enforces `access` and `roles`; the HTTP layer reads the rest
// through operations.ts). A leaf of the HTTP layer: it imports nothing of ours, so every module may read it.

// Who may call a procedure (trpc.ts): `public`, `read`, `write`; `roles` narrows further.
export type Access = 'public' | 'read' | 'write';
export type ActorRole = 'admin' | 'organiser' | 'website';

/** A body that is a file (raw.ts): its accepted types and its size limit. */
export type RawBodySpec = { mediaTypes: readonly string[]; maxBytes: number };
/** An answer that is a file (raw.ts `rawFile`): the types it can have. */
export type RawResponseSpec = { mediaTypes: readonly string[] };

export type Meta = OpenApiMeta & {
  access: Access;
  roles?: ActorRole[];
  /** 201, 202 or 204 where the spec's table of writes says so (spec 1.11). */
  successStatus?: 200 | 201 | 202 | 204;
  /** The body is a file of one of these types (raw.ts): it reaches the procedure as the context's `upload`. */
  rawBody?: RawBodySpec;
  /** The answer is a file (`rawFile(...)`, raw.ts), sent as an attachment of its own type. */
  rawResponse?: RawResponseSpec;
};
