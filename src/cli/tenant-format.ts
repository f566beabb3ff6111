import { formatHostArgument, type Tenant } from '../platform/tenancy/tenant.js';
import { formatTimestamp } from '../platform/http/dates.js';
import { field } from './output.js';

// How the tenant commands print a tenant (D10, issue 24).

/**
 * `<slug>\t<host>[,<host>...]\t<name>` (D10). Each host as `--host` takes it (issue 24: an admin host below
 * `/api` and an API domain at `/` looked alike): the bare name for `/api`, `<name>/` for `/`.
 */
export function tenantLine(t: Tenant): string {
  return `${t.slug}\t${t.hosts.map(formatHostArgument).join(',') || '-'}\t${field(t.name)}`;
}

/** A tenant as `tenant list --json` prints it. */
export function tenantJson(t: Tenant) {
  return {
    slug: t.slug, name: t.name, schema: t.schema,
    hosts: t.hosts.map((h) => ({ host: h.host, basePath: h.basePath, argument: formatHostArgument(h) })),
    suspended: t.suspended ? { since: formatTimestamp(t.suspended.since) ?? null, reason: t.suspended.reason } : null,
  };
}
