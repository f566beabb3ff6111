import { z } from 'zod';
import { pathId } from '../../platform/http/fields.js';
import { response } from '../../platform/http/response.js';

// Answer files (spec 2.2 `files`, D11 "Files"; issue 21 item 6).

export const answerFileOut = z.object({
  uuid: z.string().meta({ format: 'uuid' }),
  name: z.string().meta({ description: 'the name it was sent with (Content-Disposition or ?name=), without any path' }),
  mimeType: z.string().meta({ description: 'application/pdf, image/png or image/jpeg, as found in the content' }),
  size: z.number().int().meta({ description: 'bytes' }),
}).meta({ id: 'AnswerFile', description: 'An uploaded answer file. Name it as the answer of a `file` question (its `uuid`); unused uploads are deleted after 24 hours.' });
export type AnswerFileOut = z.infer<typeof answerFileOut>;

export const answerFileResponse = response(answerFileOut);

/** The body is the file itself (raw.ts): nothing of it is JSON. */
export const uploadFileInput = z.object({});

export const fileIdInput = z.object({ uuid: pathId() });

/** The file's bytes (raw.ts `rawFile`): documented as binary content by the OpenAPI post-processing. */
export const fileContentResponse = z.any().meta({ description: 'the file, as an attachment of its own type' });
