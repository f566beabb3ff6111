import { z } from 'zod';
import { listQuery, pathId } from '../../platform/http/fields.js';
import { response, timestampOut } from '../../platform/http/response.js';

// D6: `/categories` (`uuid`, `name`, `alias`).
const name = z.string().trim().min(1).max(200);
const alias = z.string().trim().min(1).max(80);

export const categoryOut = z.object({
  uuid: z.string(),
  name: z.string(),
  alias: z.string(),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Category', description: 'A category of offers.' });
export type CategoryOut = z.infer<typeof categoryOut>;

export const categoryResponse = response(categoryOut);
export const categoryListResponse = response(z.array(categoryOut));

export const listCategoriesInput = z.object({ ...listQuery });
export type ListCategoriesInput = z.output<typeof listCategoriesInput>;

export const categoryIdInput = z.object({ uuid: pathId() });

export const createCategoryInput = z.object({ name, alias: alias.optional() });
export type CreateCategoryInput = z.output<typeof createCategoryInput>;

/** PATCH: only keys sent apply; `name` ignores null (spec 1.12); `alias` null re-derives it from the name. */
export const updateCategoryInput = z.object({
  uuid: pathId(),
  name: name.nullish(),
  alias: alias.nullish(),
});
export type UpdateCategoryInput = z.output<typeof updateCategoryInput>;
