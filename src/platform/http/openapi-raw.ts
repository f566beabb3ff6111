import { disableQueryExample } from './openapi-annotations.js';
import type { Meta } from './trpc.js';

// The OpenAPI side of raw.ts (issue 21): a procedure whose body is a file (`rawBody`) documents the file as its
// binary request body in each accepted type, with the two ways to name it; one whose answer is a file
// (`rawResponse`) documents the binary answer and its Content-Disposition. trpc-to-openapi knows only JSON.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked and patched as free-form JSON
type Json = Record<string, any>;

const binary = (types: readonly string[]) => Object.fromEntries(types.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]));

export function describeRawOperations(paths: Record<string, Record<string, Json>>, metaOf: (method: string, path: string) => Meta | undefined): void {
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const meta = metaOf(method, path);
      if (meta?.rawBody) {
        const mib = Math.round(meta.rawBody.maxBytes / 1024 / 1024);
        op.requestBody = {
          required: true,
          description: `The file itself as the body (not JSON, not multipart), at most ${mib} MiB (413 above), with its Content-Type: `
            + `${meta.rawBody.mediaTypes.join(', ')} (or application/octet-stream). The type is checked from the content's first bytes; `
            + 'another type, or content that is not what the Content-Type says, is 415. Name the file with `Content-Disposition` or `?name=`.',
          content: binary(meta.rawBody.mediaTypes),
        };
        op.parameters = [
          ...(op.parameters ?? []),
          disableQueryExample({ name: 'name', in: 'query', required: false, description: 'the file\'s name, when no Content-Disposition is sent', schema: { type: 'string', examples: ['impfpass.pdf'] } }),
          { name: 'Content-Disposition', in: 'header', required: false, description: 'the file\'s name as RFC 6266 writes it: `attachment; filename="impfpass.pdf"` (`filename*` for non-ASCII names)', schema: { type: 'string' } },
        ];
      }
      if (meta?.rawResponse && op.responses?.['200']) {
        const ok = op.responses['200'];
        ok.description = 'The file, as an attachment (`Content-Disposition: attachment`, `X-Content-Type-Options: nosniff`)';
        ok.content = binary(meta.rawResponse.mediaTypes);
        ok.headers = {
          ...(ok.headers ?? {}),
          'Content-Disposition': { description: 'attachment; filename="…" (and filename* for non-ASCII names)', schema: { type: 'string' } },
        };
      }
    }
  }
}
