import { Category } from '../../resources/categories/entity.js';

// Every tenant entity, declared with the wildcard schema; a request's fork binds the tenant's schema.
export const entities = [Category];
