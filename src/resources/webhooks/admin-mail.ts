import type { ServiceContext } from '../../platform/context.js';
import type { Executor } from '../../platform/db/sql.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { webhookDisabledMail } from '../../platform/mail/templates/de.js';
import type { Tenant } from '../../platform/tenancy/tenant.js';

// The mail to the municipality's admin team when a webhook is disabled after a day of failed deliveries.

/** The admin team's address (D2 `contactEmail`, else the address in `mailFrom`), or null. */
export function adminAddress(tenant: Pick<Tenant, 'settings'>): string | null {
  if (tenant.settings.contactEmail) return tenant.settings.contactEmail;
  const from = tenant.settings.mailFrom?.match(/<([^<>\s]+@[^<>\s]+)>\s*$/)?.[1] ?? tenant.settings.mailFrom?.trim();
  return from && /^[^\s@]+@[^\s@]+$/.test(from) ? from : null;
}

/** Queues the mail in the caller's transaction; nothing when the tenant has no admin address. */
export async function tellAdmin(ctx: { tenant: Tenant; jobs?: ServiceContext['jobs'] }, db: Executor, sub: { uuid: string; url: string }, failingSince: number): Promise<void> {
  const to = adminAddress(ctx.tenant);
  if (!to) return;
  await queueMail(ctx, db, {
    kind: 'webhook_disabled',
    recipient: to,
    ...webhookDisabledMail({ webhook: sub.uuid, url: sub.url, tenantName: ctx.tenant.name, failingSince: new Date(failingSince) }),
    payload: { webhook: sub.uuid },
  });
}
