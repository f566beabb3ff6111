import { describe, expect, it } from 'vitest';
import { parseSettingAssignment, settingsWithDefaults } from '../../../src/platform/tenancy/settings.js';
import { normaliseHostHeader, parseHostArgument, parseHostHeader, pathBelowBase, schemaNameFor } from '../../../src/platform/tenancy/tenant.js';

describe('tenant settings (D2)', () => {
  it('fills the defaults', () => {
    expect(settingsWithDefaults({})).toEqual({
      publicAccess: true, organisersEditParticipantLists: false, organisersTransferParticipants: false,
      retentionWeeks: 12, receiptNumberPrefix: 'R-{year}-',
    });
  });

  it('drops only the stored value that no longer validates', () => {
    const s = settingsWithDefaults({ publicAccess: false, retentionWeeks: 'many', mailFrom: 'a@b.example' });
    expect(s.publicAccess).toBe(false);
    expect(s.retentionWeeks).toBe(12);
    expect(s.mailFrom).toBe('a@b.example');
  });

  it('reads key=value assignments by the setting\'s type', () => {
    expect(parseSettingAssignment('publicAccess=no')).toEqual({ key: 'publicAccess', value: false });
    expect(parseSettingAssignment('retentionWeeks=8')).toEqual({ key: 'retentionWeeks', value: 8 });
    expect(parseSettingAssignment('offerUrlTemplate=https://x.example/{alias}')).toEqual({ key: 'offerUrlTemplate', value: 'https://x.example/{alias}' });
    expect(() => parseSettingAssignment('colour=blue')).toThrow(/unknown setting/);
    expect(() => parseSettingAssignment('publicAccess=maybe')).toThrow(/true or false/);
    expect(() => parseSettingAssignment('retentionWeeks=-1')).toThrow(/whole number/);
    expect(() => parseSettingAssignment('novalue')).toThrow(/key=value/);
    // contactEmail (issue 14): an e-mail address or nothing.
    expect(parseSettingAssignment('contactEmail=it@gemeinde.example')).toEqual({ key: 'contactEmail', value: 'it@gemeinde.example' });
    expect(() => parseSettingAssignment('contactEmail=not-an-address')).toThrow(/invalid value/);
    expect(settingsWithDefaults({ contactEmail: 'broken' }).contactEmail).toBeUndefined();
    // confirmationUrlTemplate, consentUrlTemplate (issue 21, D11): a link holding {token}.
    expect(parseSettingAssignment('confirmationUrlTemplate=https://www.example.org/bestaetigen?t={token}'))
      .toEqual({ key: 'confirmationUrlTemplate', value: 'https://www.example.org/bestaetigen?t={token}' });
    expect(parseSettingAssignment('consentUrlTemplate=https://www.example.org/ok/{token}')).toEqual({ key: 'consentUrlTemplate', value: 'https://www.example.org/ok/{token}' });
    expect(() => parseSettingAssignment('confirmationUrlTemplate=https://www.example.org/bestaetigen')).toThrow(/invalid value/);
    expect(settingsWithDefaults({}).confirmationUrlTemplate).toBeUndefined();
  });
});

describe('hosts and schemas (D1)', () => {
  it('derives the schema from the slug and refuses bad slugs', () => {
    expect(schemaNameFor('bad-stadt')).toBe('t_bad_stadt');
    expect(() => schemaNameFor('Bad')).toThrow();
    expect(() => schemaNameFor('x";drop')).toThrow();
  });

  it('reads host arguments with their base path', () => {
    expect(parseHostArgument('Programm.Example')).toEqual({ host: 'programm.example', basePath: '/api' });
    expect(parseHostArgument('api.programm.example/')).toEqual({ host: 'api.programm.example', basePath: '/' });
    expect(parseHostArgument('programm.example/verwaltung/api/')).toEqual({ host: 'programm.example', basePath: '/verwaltung/api' });
    expect(() => parseHostArgument('bad host')).toThrow();
  });

  it('normalises Host headers and paths below the base path', () => {
    expect(normaliseHostHeader('Demo.Example:8080')).toBe('demo.example');
    expect(normaliseHostHeader('[::1]:8080')).toBe('[::1]');
    expect(normaliseHostHeader(undefined)).toBeNull();
    // Issue 13 item 7: out-of-range ports and garbage are malformed, not a host.
    expect(parseHostHeader('a.test:65535')).toEqual({ host: 'a.test', port: '65535' });
    expect(parseHostHeader('A.test')).toEqual({ host: 'a.test', port: null });
    for (const bad of ['a.test:99999', 'a.test:65536', 'a.test:123456', 'a.test:-1', 'a.test:8o', 'a.test:1:2', 'a@b', 'a/b', '[::1', '[zz]', 'a b', '']) {
      expect(parseHostHeader(bad), bad).toBeNull();
    }
    expect(normaliseHostHeader('a.test:99999')).toBeNull();
    expect(pathBelowBase('/api', '/api/offers')).toBe('/offers');
    expect(pathBelowBase('/api', '/api')).toBe('/');
    expect(pathBelowBase('/api', '/apix/offers')).toBeNull();
    expect(pathBelowBase('/', '/offers')).toBe('/offers');
  });
});
