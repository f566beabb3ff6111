import { procedure, router } from '../../platform/http/trpc.js';
import { debtorIdInput, debtorListResponse, debtorResponse, listDebtorsInput } from './schema.js';
import * as service from './service.js';

const tags = ['money'];

// D8, D10: debtors are read-only and admin-only (money and family data).
export const debtorsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/debtors', tags, summary: 'List debtors' } })
    .input(listDebtorsInput).output(debtorListResponse)
    .query(({ ctx, input }) => service.listDebtors(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/debtors/{uuid}', tags, summary: 'One debtor' } })
    .input(debtorIdInput).output(debtorResponse)
    .query(({ ctx, input }) => service.getDebtor(ctx, input.uuid)),
});
