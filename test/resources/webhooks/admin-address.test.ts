import { describe, expect, it } from 'vitest';
import { adminAddress } from '../../../src/resources/webhooks/admin-mail.js';
import { settingsWithDefaults } from '../../../src/platform/tenancy/settings.js';

// Who is told when a webhook is disabled (issue 14): the setting contactEmail (D2 extension), else the address in mailFrom.
describe('the admin team\'s address', () => {
  const of = (raw: Record<string, unknown>) => adminAddress({ settings: settingsWithDefaults(raw) });
  it('is contactEmail when set', () => {
    expect(of({ contactEmail: 'it@gemeinde.example', mailFrom: 'Ferienprogramm <fp@gemeinde.example>' })).toBe('it@gemeinde.example');
  });
  it('else the address of mailFrom, with or without a display name', () => {
    expect(of({ mailFrom: 'Ferienprogramm <fp@gemeinde.example>' })).toBe('fp@gemeinde.example');
    expect(of({ mailFrom: 'fp@gemeinde.example' })).toBe('fp@gemeinde.example');
  });
  it('is nobody when neither is set or usable (an invalid contactEmail is dropped by the settings)', () => {
    expect(of({})).toBeNull();
    expect(of({ mailFrom: 'Ferienprogramm' })).toBeNull();
    expect(of({ contactEmail: 'not an address' })).toBeNull();
  });
});
