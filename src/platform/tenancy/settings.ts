import { z } from 'zod';

// D2: per-tenant installation settings with their defaults.
export const tenantSettingsSchema = z.object({
  publicAccess: z.boolean().default(true),
  organisersEditParticipantLists: z.boolean().default(false),
  organisersTransferParticipants: z.boolean().default(false),
  retentionWeeks: z.number().int().min(0).max(520).default(12),
  offerUrlTemplate: z.string().optional(),
  receiptNumberPrefix: z.string().max(40).default('R-{year}-'),
  mailFrom: z.string().optional(),
  /** The admin team's address for notices about the municipality's integrations (a webhook disabled, issue 14). */
  contactEmail: z.email().optional(),
  /**
   * D11: the link of the family's confirmation mail, `{token}` replaced by the single-use token; default
   * `https://<first host>/anmeldung/bestaetigen/{token}`. The website's page posts it to /family-applications/confirm.
   */
  confirmationUrlTemplate: z.string().max(500).refine((v) => v.includes('{token}'), 'must contain {token}').optional(),
  /** D11: the link of the guardian's consent mail; default `https://<first host>/anmeldung/einwilligen/{token}`. */
  consentUrlTemplate: z.string().max(500).refine((v) => v.includes('{token}'), 'must contain {token}').optional(),
});

export type TenantSettings = z.infer<typeof tenantSettingsSchema>;
export const SETTING_KEYS = Object.keys(tenantSettingsSchema.shape) as (keyof TenantSettings)[];

/** Stored settings over the defaults; a stored value that no longer validates falls back on its own. */
export function settingsWithDefaults(raw: unknown): TenantSettings {
  const stored = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const valid: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    if (!(key in stored)) continue;
    const check = tenantSettingsSchema.shape[key].safeParse(stored[key]);
    if (check.success) valid[key] = check.data;
  }
  return tenantSettingsSchema.parse(valid);
}

/** Reads `key=value` from the CLI: booleans and numbers by the setting's type. */
export function parseSettingAssignment(assignment: string): { key: keyof TenantSettings; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new Error(`setting "${assignment}" must look like key=value`);
  const key = assignment.slice(0, eq) as keyof TenantSettings;
  const raw = assignment.slice(eq + 1);
  if (!SETTING_KEYS.includes(key)) throw new Error(`unknown setting "${key}"; known: ${SETTING_KEYS.join(', ')}`);
  let value: unknown = raw;
  if (key === 'publicAccess' || key === 'organisersEditParticipantLists' || key === 'organisersTransferParticipants') {
    if (!['true', 'false', '1', '0', 'yes', 'no'].includes(raw)) throw new Error(`setting "${key}" takes true or false`);
    value = ['true', '1', 'yes'].includes(raw);
  } else if (key === 'retentionWeeks') {
    if (!/^\d+$/.test(raw)) throw new Error(`setting "${key}" takes a whole number of weeks`);
    value = Number(raw);
  }
  const check = tenantSettingsSchema.shape[key].safeParse(value);
  if (!check.success) throw new Error(`setting "${key}": invalid value "${raw}"`);
  return { key, value: check.data };
}
