import { procedure, router } from '../../platform/http/trpc.js';
import { ledgerIdInput, ledgerListResponse, ledgerResponse, listLedgersInput } from './schema.js';
import * as service from './service.js';

const tags = ['money'];

// D8, D10: ledgers are read-only and admin-only.
export const ledgersRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/ledgers', tags, summary: 'List ledgers (a debtor\'s account for one edition)' } })
    .input(listLedgersInput).output(ledgerListResponse)
    .query(({ ctx, input }) => service.listLedgers(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/ledgers/{uuid}', tags, summary: 'One ledger with its book entries' } })
    .input(ledgerIdInput).output(ledgerResponse)
    .query(({ ctx, input }) => service.getLedger(ctx, input.uuid)),
});
