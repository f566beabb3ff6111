import { ANSWER_FILE_TYPES, MAX_ANSWER_FILE_BYTES } from '../../domain/answer-files.js';
import { procedure, router } from '../../platform/http/trpc.js';
import { answerFileResponse, fileContentResponse, fileIdInput, uploadFileInput } from './schema.js';
import * as service from './service.js';

const tags = ['files'];

// D11 "Files" (issue 21 item 6): the body of POST /files is the file itself (src/platform/http/raw.ts reads it,
// checks its size and its type from the content); GET /files/{uuid} answers with the file as an attachment.
export const filesRouter = router({
  upload: procedure
    .meta({
      access: 'write', roles: ['admin', 'website'], successStatus: 201,
      rawBody: { mediaTypes: ANSWER_FILE_TYPES, maxBytes: MAX_ANSWER_FILE_BYTES },
      openapi: { method: 'POST', path: '/files', tags, summary: 'Upload an answer file' },
    })
    .input(uploadFileInput).output(answerFileResponse)
    .mutation(({ ctx }) => service.uploadFile(ctx, ctx.upload)),
  get: procedure
    .meta({
      access: 'read', roles: ['admin', 'organiser'], rawResponse: { mediaTypes: ANSWER_FILE_TYPES },
      openapi: { method: 'GET', path: '/files/{uuid}', tags, summary: 'Download an answer file' },
    })
    .input(fileIdInput).output(fileContentResponse)
    .query(({ ctx, input }) => service.getFile(ctx, input.uuid)),
});
