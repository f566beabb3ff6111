import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from './logging/logger.js';
import type { Actor } from './auth/tokens.js';
import type { Viewer } from './auth/viewer.js';
import type { Tenant } from './tenancy/tenant.js';
import type { Executor } from './db/sql.js';
import type { JobSender } from './jobs/names.js';
import type { PagingReport } from './http/paging.js';

export type { Actor, Viewer };

/**
 * What every use case receives first (style rule 4): the tenant resolved once at the edge, an entity
 * manager bound to the tenant's schema, the caller (its viewer, built once: platform/auth/viewer.ts), and a
 * logger. Jobs and the CLI build the same shape and name their viewer (the system) explicitly.
 */
export type ServiceContext = {
  tenant: Tenant;
  em: EntityManager;
  viewer: Viewer;
  log: Logger;
  /** Enqueues background work (D9); set by the API, absent in jobs, the CLI and plain test contexts. */
  jobs?: JobSender;
  /** Where a list reports its total for the paging headers (issue 24); set by the API only. */
  paging?: PagingReport;
};

/** The SQL executor for projections: the current transaction's, or the pool's. */
export function dbOf(em: EntityManager): Executor {
  return (em.getTransactionContext() ?? em.getConnection().getClient()) as Executor;
}
