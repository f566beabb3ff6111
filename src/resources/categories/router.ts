import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  categoryIdInput, categoryListResponse, categoryResponse, createCategoryInput, listCategoriesInput, updateCategoryInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['categories'];

export const categoriesRouter = router({
  list: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/categories', tags, summary: 'List categories' } })
    .input(listCategoriesInput).output(categoryListResponse)
    .query(({ ctx, input }) => service.listCategories(ctx, input)),
  get: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/categories/{uuid}', tags, summary: 'One category' } })
    .input(categoryIdInput).output(categoryResponse)
    .query(({ ctx, input }) => service.getCategory(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/categories', tags, summary: 'Create a category' } })
    .input(createCategoryInput).output(categoryResponse)
    .mutation(({ ctx, input }) => service.createCategory(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'PATCH', path: '/categories/{uuid}', tags, summary: 'Change a category' } })
    .input(updateCategoryInput).output(categoryResponse)
    .mutation(({ ctx, input }) => service.updateCategory(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/categories/{uuid}', tags, summary: 'Delete a category' } })
    .input(categoryIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteCategory(ctx, input.uuid)),
});
