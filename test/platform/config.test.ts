import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, readConfig, SETTING_NAMES } from '../../src/platform/config.js';

// Issue 22.13: every setting is read by one zod schema; a wrong value is one sentence that names the setting.
describe('the settings schema', () => {
  it('gives the documented defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080, trustProxy: false, logLevel: 'info', dataDir: '.data', tenantsDir: 'tenants', migrateConcurrency: 8,
      jobHeartbeatSeconds: 10, mailLeaseSeconds: 60, pgListenNotify: false, pgPreparedStatements: 'auto', pgConnectionAffinity: true,
      pgPoolSize: 10, embeddedPgPort: 54329, publicCacheMs: 3000, metricsJobsCacheMs: 5000, secretsKeyPrevious: [],
    });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.secretsKey).toBeUndefined();
    expect(c.demo).toBeUndefined();
    expect([...c.webhookAllowHosts]).toEqual([]);
  });

  it('reads each setting by its name', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgresql://u:p@db:5432/x', REDIS_URL: 'redis://r:6379/1', PORT: '18200', SMTP_URL: 'smtp://m:25', LOG_LEVEL: 'WARN',
      DEMO: 'no', PG_LISTEN_NOTIFY: 'on', PG_PREPARED_STATEMENTS: 'off', MIGRATE_CONCURRENCY: '16', WEBHOOK_ALLOW_HOSTS: 'A.example, b.example',
      WEBHOOK_RETRY_BASE_SECONDS: '0.3', SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(c).toMatchObject({ databaseUrl: 'postgresql://u:p@db:5432/x', redisUrl: 'redis://r:6379/1', port: 18200, logLevel: 'warn', demo: false, pgListenNotify: true, pgPreparedStatements: 'off', migrateConcurrency: 16, webhookRetryBaseSeconds: 0.3 });
    expect([...c.webhookAllowHosts]).toEqual(['a.example', 'b.example']);
    expect(c.secretsKey).toEqual(Buffer.alloc(32, 7));
  });

  it.each([
    ['PORT', 'eighty', /^PORT must be a whole number from 0 to 65535 \(got "eighty"\)\.$/],
    ['PORT', '70000', /^PORT must be a whole number/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)\.$/],
    ['PG_LISTEN_NOTIFY', 'maybe', /^PG_LISTEN_NOTIFY must be on or off/],
    ['DEMO', 'sometimes', /^DEMO must be on or off/],
    ['MIGRATE_CONCURRENCY', '17', /^MIGRATE_CONCURRENCY must be a whole number from 1 to 16/],
    ['JOB_HEARTBEAT_SECONDS', '5', /^JOB_HEARTBEAT_SECONDS must be a whole number from 10/],
    ['PUBLIC_CACHE_MS', '-1', /^PUBLIC_CACHE_MS must be a whole number/],
    ['WEBHOOK_LEASE_SECONDS', 'soon', /^WEBHOOK_LEASE_SECONDS must be a number of seconds/],
    ['TRUST_PROXY', 'everyone', /^TRUST_PROXY must be off, on \(one proxy\), a number of proxies, or proxy addresses\/CIDRs/],
    ['TRUST_PROXY', '10.0.0.0/33', /^TRUST_PROXY must be/],
  ])('refuses %s=%s with one sentence naming it', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('never repeats a secret or a URL (which may hold a password) in its sentence', () => {
    for (const [name, value] of [['DATABASE_URL', 'mysql://u:hunter2@db/x'], ['REDIS_URL', 'hunter2'], ['SMTP_URL', 'http://u:hunter2@m'], ['SECRETS_KEY', 'hunter2'], ['SECRETS_KEY_PREVIOUS', 'hunter2']]) {
      let message = '';
      try {
        loadConfig({ [name]: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, name).toMatch(new RegExp(`^${name} must `));
      expect(message, name).not.toContain('hunter2');
      expect(message.split('. ').length, name).toBe(1);
    }
  });

  it('TRUST_PROXY: off, a hop count (true is one hop, by the on/off rule) or proxy addresses and CIDRs', () => {
    const trust = (v: string) => loadConfig({ TRUST_PROXY: v }).trustProxy;
    for (const off of ['', 'off', 'false', 'no', '0']) expect(trust(off), off).toBe(false);
    for (const one of ['on', 'true', 'TRUE', 'yes', '1']) expect(trust(one), one).toEqual({ hops: 1 });
    expect(trust('2')).toEqual({ hops: 2 });
    expect(trust('10.0.0.0/8, 192.168.1.7,fd00::/8')).toEqual({ addresses: ['10.0.0.0/8', '192.168.1.7', 'fd00::/8'] });
  });

  it('reads the environment again only when one of its variables changed', () => {
    const env: NodeJS.ProcessEnv = { PUBLIC_CACHE_MS: '5' };
    const first = readConfig(env);
    expect(readConfig(env)).toBe(first);
    env.PUBLIC_CACHE_MS = '6';
    expect(readConfig(env).publicCacheMs).toBe(6);
    expect(SETTING_NAMES).toContain('SECRETS_KEY');
  });
});
