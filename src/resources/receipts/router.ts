import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import { refuseChange } from '../../engines/ledger/index.js';
import {
  createReceiptInput, listReceiptsInput, receiptIdInput, receiptListResponse, receiptResponse, reverseReceiptInput,
} from './schema.js';
import { reverseReceipt } from './reverse.js';
import * as service from './service.js';

const tags = ['money'];

// D8, D10: receipts are admin-only; a receipt is never changed or deleted, only reversed (PATCH/DELETE: 405).
export const receiptsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/receipts', tags, summary: 'List receipts, newest first' } })
    .input(listReceiptsInput).output(receiptListResponse)
    .query(({ ctx, input }) => service.listReceipts(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/receipts/{uuid}', tags, summary: 'One receipt' } })
    .input(receiptIdInput).output(receiptResponse)
    .query(({ ctx, input }) => service.getReceipt(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/receipts', tags, summary: 'Record a payment: pays due applications of one debtor' } })
    .input(createReceiptInput).output(receiptResponse)
    .mutation(({ ctx, input }) => service.createReceipt(ctx, input)),
  reverse: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'POST', path: '/receipts/{uuid}/reverse', tags, summary: 'Reverse a receipt (all lines or some); answers with the original' } })
    .input(reverseReceiptInput).output(receiptResponse)
    .mutation(({ ctx, input }) => reverseReceipt(ctx, input)),
  update: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'PATCH', path: '/receipts/{uuid}', tags, summary: 'Not allowed: receipts are immutable, reverse instead (405)' } })
    .input(receiptIdInput).output(z.void())
    .mutation(({ ctx, input }) => refuseChange(ctx, 'receipts', input.uuid, 'PATCH')),
  delete: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'DELETE', path: '/receipts/{uuid}', tags, summary: 'Not allowed: receipts are immutable, reverse instead (405)' } })
    .input(receiptIdInput).output(z.void())
    .mutation(({ ctx, input }) => refuseChange(ctx, 'receipts', input.uuid, 'DELETE')),
});
