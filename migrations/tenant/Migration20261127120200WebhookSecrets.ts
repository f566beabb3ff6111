import { Migration } from '@mikro-orm/migrations';

// Issue 22.12: webhook secrets at rest and rotation. `secret` now holds the stored form (sealed with the
// operator's SECRETS_KEY, `enc:v1:…`, src/platform/secrets/box.ts; as it is without a key). The previous
// secrets of rotations become a list, `previous_secrets` ([{secret, until}], stored forms too), so a second
// rotation within the grace period keeps the first rotation's previous secret signing until its own `until`
// (with one `previous_secret` column it was dropped at once). Runs with search_path set to the tenant's schema.
export class Migration20261127120200WebhookSecrets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhooks add column previous_secrets jsonb not null default '[]'::jsonb`);
    this.addSql(`update webhooks set previous_secrets = jsonb_build_array(jsonb_build_object('secret', previous_secret, 'until', previous_secret_until))
      where previous_secret is not null and previous_secret_until > now()`);
    this.addSql(`alter table webhooks drop column previous_secret, drop column previous_secret_until`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table webhooks add column previous_secret text, add column previous_secret_until timestamptz`);
    this.addSql(`update webhooks set previous_secret = p->>'secret', previous_secret_until = (p->>'until')::timestamptz
      from (select w.uuid, (select x from jsonb_array_elements(w.previous_secrets) x order by (x->>'until')::timestamptz desc limit 1) as p
        from webhooks w) latest where latest.uuid = webhooks.uuid and latest.p is not null`);
    this.addSql(`alter table webhooks drop column previous_secrets`);
  }
}
