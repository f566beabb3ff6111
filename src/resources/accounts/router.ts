import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  accountIdInput, accountListResponse, accountResponse, createAccountInput, listAccountsInput, updateAccountInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['accounts'];

// D6/D10: accounts are admin-only, reading included (`GET /accounts` is 403 for organisers).
export const accountsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/accounts', tags, summary: 'List family accounts' } })
    .input(listAccountsInput).output(accountListResponse)
    .query(({ ctx, input }) => service.listAccounts(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/accounts/{uuid}', tags, summary: 'One family account' } })
    .input(accountIdInput).output(accountResponse)
    .query(({ ctx, input }) => service.getAccount(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/accounts', tags, summary: 'Create a family account' } })
    .input(createAccountInput).output(accountResponse)
    .mutation(({ ctx, input }) => service.createAccount(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'PATCH', path: '/accounts/{uuid}', tags, summary: 'Change a family account' } })
    .input(updateAccountInput).output(accountResponse)
    .mutation(({ ctx, input }) => service.updateAccount(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/accounts/{uuid}', tags, summary: 'Delete a family account; its participants stay' } })
    .input(accountIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteAccount(ctx, input.uuid)),
});
