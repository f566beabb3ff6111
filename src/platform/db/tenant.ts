import { dbOf, type ServiceContext } from '../context.js';
import { inSchema, type TenantExecutor } from './sql.js';

/**
 * Typed queries on the request's tenant: the current transaction's executor (or the pool's) with the tenant's
 * schema on every table, `tenantDb(ctx).selectFrom('offers')…`.
 */
export function tenantDb(ctx: Pick<ServiceContext, 'em' | 'tenant'>): TenantExecutor {
  return inSchema(dbOf(ctx.em), ctx.tenant.schema);
}
