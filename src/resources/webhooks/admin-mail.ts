import type { ServiceContext } from '../../platform/context.js';
import type { Executor } from '../../platform/db/sql.js';
import { queueMail } from '../../platform/mail/outbox.js';
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
  const since = new Date(failingSince).toLocaleString('de-DE', { timeZone: 'Europe/Berlin', dateStyle: 'medium', timeStyle: 'short' });
  await queueMail(ctx, db, {
    kind: 'webhook_disabled',
    recipient: to,
    subject: 'Webhook abgeschaltet: Zustellung seit 24 Stunden fehlgeschlagen',
    body: [
      'Guten Tag,',
      '',
      `der Webhook ${sub.uuid} (${sub.url}) von ${ctx.tenant.name} wurde abgeschaltet: seit ${since} Uhr hat sein Empfänger keine`,
      'Zustellung mehr mit einem Status 2xx beantwortet.',
      '',
      'Die Zustellversuche zeigt GET /webhooks/{uuid}/deliveries. Sobald der Empfänger wieder erreichbar ist, schaltet',
      'PATCH /webhooks/{uuid} mit {"enabled": true} ihn wieder ein; die Ereignisse seither werden dann der Reihe nach zugestellt.',
      '',
      '(The webhook was disabled after 24 hours of failed deliveries; enable it again with PATCH {"enabled": true}.)',
    ].join('\n'),
    payload: { webhook: sub.uuid },
  });
}
