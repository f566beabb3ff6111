import type { ServiceContext } from '../../platform/context.js';
import { tenantDb } from '../../platform/db/tenant.js';
import { notFound } from '../../domain/errors.js';
import { Problem } from '../../platform/http/problem.js';

// D8, D10: bookings are never changed or deleted (PATCH/DELETE: 405), and neither are receipts (they are
// reversed instead). The platform answers a method without a procedure as an unknown endpoint (404), so these
// records have explicit PATCH and DELETE procedures that answer here: 404 for an unknown record, as for any
// record, else 405 with `Allow: GET`.
const RECORDS = {
  bookings: { label: 'booking', hint: 'reverse the receipt or change the application instead' },
  receipts: { label: 'receipt', hint: 'reverse it instead (POST /receipts/{uuid}/reverse)' },
} as const;

export async function refuseChange(ctx: ServiceContext, table: keyof typeof RECORDS, uuid: string, method: 'PATCH' | 'DELETE'): Promise<never> {
  const { label, hint } = RECORDS[table];
  const found = await tenantDb(ctx).selectFrom(table).select('uuid').where('uuid', '=', uuid).executeTakeFirst();
  if (!found) throw notFound(`No ${label} with the identifier ${uuid} exists.`);
  const verb = method === 'PATCH' ? 'changed' : 'deleted';
  throw new Problem(405, `A ${label} is never ${verb}: ${hint}.`, undefined, { Allow: table === 'receipts' ? 'GET, POST' : 'GET' });
}
