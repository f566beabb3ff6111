import { isIP } from 'node:net';
import { z } from 'zod';

// Every environment setting of the service (D1 and our own), read by ONE zod schema: `SETTINGS` below has one
// line per setting (its variable, its rule and default). The entry points check it first (config-check.ts),
// so a wrong value stops the process with one sentence naming the setting; modules read their values from
// `readConfig()`, never from `process.env`.
export type Role = 'api' | 'worker' | 'all';

/** A setting that is wrong: its message is one sentence that names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** An on/off setting: true for 1/true/yes/on, false for 0/false/no/off (any case), undefined otherwise. */
export function flag(value: string | undefined): boolean | undefined {
  const v = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return undefined;
}

/**
 * `TRUST_PROXY` (D12): how far forwarding headers are believed. `false`: not at all (the socket's peer is the
 * client, `Host` is the host). `hops`: that many proxies in front of the service (`true`/`on` is one hop).
 * `addresses`: proxies by address or CIDR (`10.0.0.0/8, fd00::/8`); the client is the first address from the
 * right of `X-Forwarded-For` that is not one of them. Never "trust everything".
 */
export type TrustProxy = false | { hops: number } | { addresses: string[] };

// ---- the rules a value may follow (each names what it expects, for the one sentence) ----------------------

const unset = (v: string | undefined) => v === undefined || v.trim() === '';

/** Optional text: empty is unset. */
const text = () => z.string().optional().transform((v) => (unset(v) ? undefined : v!.trim()));

/** A URL with one of the given schemes (its text is never repeated in the message: it may hold a password). */
const url = (schemes: string[], example: string) => z.string().optional().transform((v, ctx) => {
  if (unset(v)) return undefined;
  let ok = false;
  try {
    ok = schemes.includes(new URL(v!.trim()).protocol.replace(/:$/, ''));
  } catch {
    ok = false;
  }
  if (!ok) ctx.addIssue({ code: 'custom', message: `must be a URL such as ${example}`, params: { secret: true } });
  return v!.trim();
});

const wholeNumber = (min: number, max: number, fallback: number) => z.string().optional().transform((v, ctx) => {
  if (unset(v)) return fallback;
  const n = Number(v!.trim());
  if (!/^\s*\d+\s*$/.test(v!) || n < min || n > max) {
    ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
    return fallback;
  }
  return n;
});

const seconds = (min: number, max: number) => z.string().optional().transform((v, ctx) => {
  if (unset(v)) return undefined;
  const n = Number(v!.trim());
  if (!Number.isFinite(n) || n < min || n > max) {
    ctx.addIssue({ code: 'custom', message: `must be a number of seconds from ${min} to ${max}` });
    return undefined;
  }
  return n;
});

/** The project's one on/off rule (`flag`); `fallback` when unset. */
const onOff = <T extends boolean | undefined>(fallback: T) => z.string().optional().transform((v, ctx): boolean | T => {
  if (unset(v)) return fallback;
  const b = flag(v);
  if (b === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be on or off (1/true/yes/on or 0/false/no/off)' });
    return fallback;
  }
  return b;
});

const oneOf = <T extends string>(values: readonly T[], fallback: T) => z.string().optional().transform((v, ctx): T => {
  if (unset(v)) return fallback;
  const value = v!.trim().toLowerCase() as T;
  if (!values.includes(value)) ctx.addIssue({ code: 'custom', message: `must be one of ${values.join(', ')}` });
  return values.includes(value) ? value : fallback;
});

/** A fraction 0 < x ≤ 1 (a share of a process's pool). */
const fraction = (fallback: number) => z.string().optional().transform((v, ctx) => {
  if (unset(v)) return fallback;
  const n = Number(v!.trim());
  if (!Number.isFinite(n) || n <= 0 || n > 1) {
    ctx.addIssue({ code: 'custom', message: 'must be a fraction above 0 and at most 1, such as 0.6' });
    return fallback;
  }
  return n;
});

/** `auto`, or the one on/off rule. */
const autoOnOff = () => z.string().optional().transform((v, ctx): 'auto' | 'on' | 'off' => {
  if (unset(v) || v!.trim().toLowerCase() === 'auto') return 'auto';
  const b = flag(v);
  if (b === undefined) {
    ctx.addIssue({ code: 'custom', message: 'must be auto, on or off (1/true/yes/on or 0/false/no/off)' });
    return 'auto';
  }
  return b ? 'on' : 'off';
});

/** Comma-separated host names (lower-cased). */
const hostList = () => z.string().optional().transform((v) => new Set((v ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean)));

/** An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressOrRange(value: string): boolean {
  const [addr, prefix, ...rest] = value.split('/');
  const family = isIP(addr ?? '');
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const trustProxy = () => z.string().optional().transform((v, ctx): TrustProxy => {
  if (unset(v)) return false;
  const value = v!.trim();
  const on = flag(value);
  if (on !== undefined) return on ? { hops: 1 } : false;
  if (/^\d+$/.test(value)) return Number(value) === 0 ? false : { hops: Math.min(Number(value), 100) };
  const addresses = value.split(',').map((a) => a.trim()).filter(Boolean);
  const wrong = addresses.find((a) => !isAddressOrRange(a));
  if (wrong !== undefined || addresses.length === 0) {
    ctx.addIssue({ code: 'custom', message: `must be off, on (one proxy), a number of proxies, or proxy addresses/CIDRs such as 10.0.0.0/8 ("${(wrong ?? value).slice(0, 60)}" is none of these)` });
    return false;
  }
  return { addresses };
});

/** An AES-256 key: 32 bytes as base64 (`openssl rand -base64 32`) or 64 hex digits. */
export function keyBytes(value: string): Buffer | undefined {
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(v)) {
    const b = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (b.length === 32) return b;
  }
  return undefined;
}

const KEY_MESSAGE = 'must be 32 random bytes as base64 (openssl rand -base64 32) or 64 hex digits';
const key = () => z.string().optional().transform((v, ctx) => {
  if (unset(v)) return undefined;
  const bytes = keyBytes(v!);
  if (!bytes) ctx.addIssue({ code: 'custom', message: KEY_MESSAGE, params: { secret: true } });
  return bytes;
});
const keys = () => z.string().optional().transform((v, ctx) => {
  const out: Buffer[] = [];
  for (const part of (v ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const bytes = keyBytes(part);
    if (!bytes) ctx.addIssue({ code: 'custom', message: `must list keys that each ${KEY_MESSAGE.replace(/^must be/, 'are')}`, params: { secret: true } });
    else out.push(bytes);
  }
  return out;
});

// ---- the settings: one line each ----------------------------------------------------------------------

const setting = <T extends z.ZodType>(name: string, schema: T) => ({ name, schema });

const SETTINGS = {
  databaseUrl: setting('DATABASE_URL', url(['postgres', 'postgresql'], 'postgresql://user:password@host:5432/database')),
  redisUrl: setting('REDIS_URL', url(['redis', 'rediss'], 'redis://host:6379/0')),
  port: setting('PORT', wholeNumber(0, 65535, 8080)),
  smtpUrl: setting('SMTP_URL', url(['smtp', 'smtps'], 'smtp://user:password@mail.example:587')),
  trustProxy: setting('TRUST_PROXY', trustProxy()),
  logLevel: setting('LOG_LEVEL', oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info')),
  dataDir: setting('DATA_DIR', text()),
  tenantsDir: setting('TENANTS_DIR', text()),
  /** 1/true/yes registers and fills the demo municipality, 0/false/no never; unset: only with the embedded database. */
  demo: setting('DEMO', onOff(undefined)),
  /** When set, `/metrics` needs `Authorization: Bearer <token>`. */
  metricsToken: setting('METRICS_TOKEN', text()),
  nodeEnv: setting('NODE_ENV', text()),
  outputChecks: setting('OUTPUT_CHECKS', onOff(undefined)),
  migrateConcurrency: setting('MIGRATE_CONCURRENCY', wholeNumber(1, 16, 8)),
  jobHeartbeatSeconds: setting('JOB_HEARTBEAT_SECONDS', wholeNumber(10, 3600, 10)),
  mailLeaseSeconds: setting('MAIL_LEASE_SECONDS', wholeNumber(1, 86_400, 60)),
  pgListenNotify: setting('PG_LISTEN_NOTIFY', onOff(false)),
  /** `auto`: named statements unless a pooler is found at start (platform/db/prepared.ts). */
  pgPreparedStatements: setting('PG_PREPARED_STATEMENTS', autoOnOff()),
  pgConnectionAffinity: setting('PG_CONNECTION_AFFINITY', onOff(true)),
  pgPoolSize: setting('PG_POOL_SIZE', wholeNumber(1, 1000, 10)),
  // Issue 23: the database's timeouts (milliseconds, 0: no limit) and shares of the pool (databaseSettings below).
  pgLockTimeoutMs: setting('PG_LOCK_TIMEOUT_MS', wholeNumber(0, 86_400_000, 3_000)),
  pgStatementTimeoutMs: setting('PG_STATEMENT_TIMEOUT_MS', wholeNumber(0, 86_400_000, 30_000)),
  pgIdleInTransactionTimeoutMs: setting('PG_IDLE_IN_TRANSACTION_TIMEOUT_MS', wholeNumber(0, 86_400_000, 60_000)),
  pgJobLockTimeoutMs: setting('PG_JOB_LOCK_TIMEOUT_MS', wholeNumber(0, 86_400_000, 30_000)),
  pgJobStatementTimeoutMs: setting('PG_JOB_STATEMENT_TIMEOUT_MS', wholeNumber(0, 86_400_000, 600_000)),
  pgMigrationLockTimeoutMs: setting('PG_MIGRATION_LOCK_TIMEOUT_MS', wholeNumber(0, 86_400_000, 60_000)),
  pgMigrationStatementTimeoutMs: setting('PG_MIGRATION_STATEMENT_TIMEOUT_MS', wholeNumber(0, 86_400_000, 0)),
  pgTenantPoolShare: setting('PG_TENANT_POOL_SHARE', fraction(0.6)),
  pgOfferPoolShare: setting('PG_OFFER_POOL_SHARE', fraction(0.2)),
  pgPoolWaitMs: setting('PG_POOL_WAIT_MS', wholeNumber(1, 600_000, 5_000)),
  embeddedPgPort: setting('EMBEDDED_PG_PORT', wholeNumber(1, 65535, 54329)),
  embeddedPgHome: setting('EMBEDDED_PG_HOME', text()),
  publicCacheMs: setting('PUBLIC_CACHE_MS', wholeNumber(0, 3_600_000, 3000)),
  metricsJobsCacheMs: setting('METRICS_JOBS_CACHE_MS', wholeNumber(0, 3_600_000, 5000)),
  mediaFetchAllowHosts: setting('MEDIA_FETCH_ALLOW_HOSTS', hostList()),
  webhookAllowHosts: setting('WEBHOOK_ALLOW_HOSTS', hostList()),
  webhookLeaseSeconds: setting('WEBHOOK_LEASE_SECONDS', seconds(1, 3600)),
  webhookRetryBaseSeconds: setting('WEBHOOK_RETRY_BASE_SECONDS', seconds(0.01, 3600)),
  /** Encrypts webhook secrets at rest (platform/secrets/); unset: stored as they are, with a warning at start. */
  secretsKey: setting('SECRETS_KEY', key()),
  /** Keys that still decrypt during a rotation (docs/operations.md "Rotating SECRETS_KEY"). */
  secretsKeyPrevious: setting('SECRETS_KEY_PREVIOUS', keys()),
};

type Settings = typeof SETTINGS;
type Parsed = { [K in keyof Settings]: z.output<Settings[K]['schema']> };

export type Config = Omit<Parsed, 'dataDir' | 'tenantsDir'> & { dataDir: string; tenantsDir: string };

/** The environment variables the schema reads. */
export const SETTING_NAMES: readonly string[] = Object.values(SETTINGS).map((s) => s.name);

const schema = z.object(Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, s.schema])) as { [K in keyof Settings]: Settings[K]['schema'] });

/** Parses the environment; a wrong value throws a ConfigError whose message is one sentence naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input = Object.fromEntries(Object.entries(SETTINGS).map(([k, s]) => [k, env[s.name]]));
  const result = schema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const entry = SETTINGS[issue.path[0] as keyof Settings];
    const raw = env[entry.name] ?? '';
    const secret = (issue as { params?: { secret?: boolean } }).params?.secret;
    const got = secret ? '' : ` (got "${raw.slice(0, 60)}")`;
    throw new ConfigError(`${entry.name} ${issue.message}${got}.`);
  }
  const parsed = result.data;
  return { ...parsed, dataDir: parsed.dataDir ?? '.data', tenantsDir: parsed.tenantsDir ?? 'tenants' };
}

let cached: { env: NodeJS.ProcessEnv; key: string; config: Config } | undefined;

/**
 * The settings of this process. Parsed once; parsed again only when one of the variables changed since (tests
 * change them between cases), so reading a setting costs a string join, never a parse.
 */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const key = SETTING_NAMES.map((n) => env[n] ?? '\u0001').join('\u0000');
  if (cached && cached.env === env && cached.key === key) return cached.config;
  const config = loadConfig(env);
  cached = { env, key, config };
  return config;
}

/**
 * Whether the demo municipality (tenant files with `"demo": true`, i.e. tenants/demo.json) is applied:
 * asked for with `--demo` or `DEMO=1`, refused with `DEMO=0`, else only with the embedded database, never
 * silently on a deployment with DATABASE_URL.
 */
export function demoWanted(config: Config, argv: string[] = []): boolean {
  if (argv.includes('--demo')) return true;
  return config.demo ?? !config.databaseUrl;
}

/**
 * Issue 23: the database's timeouts and shares of the pool, grouped for the pool's code (README "Configuration",
 * docs/operations.md "When the database is busy"). Milliseconds are whole numbers ≥ 0 (0: no limit); shares are
 * fractions 0 < x ≤ 1 of a process's pool.
 */
export type DatabaseSettings = {
  timeouts: {
    request: { lockMs: number; statementMs: number };
    job: { lockMs: number; statementMs: number };
    migration: { lockMs: number; statementMs: number };
    idleInTransactionMs: number;
  };
  tenantPoolShare: number;
  offerPoolShare: number;
  poolWaitMs: number;
};

export function databaseSettings(env: NodeJS.ProcessEnv = process.env): DatabaseSettings {
  const c = readConfig(env);
  return {
    timeouts: {
      request: { lockMs: c.pgLockTimeoutMs, statementMs: c.pgStatementTimeoutMs },
      job: { lockMs: c.pgJobLockTimeoutMs, statementMs: c.pgJobStatementTimeoutMs },
      migration: { lockMs: c.pgMigrationLockTimeoutMs, statementMs: c.pgMigrationStatementTimeoutMs },
      idleInTransactionMs: c.pgIdleInTransactionTimeoutMs,
    },
    tenantPoolShare: c.pgTenantPoolShare,
    offerPoolShare: c.pgOfferPoolShare,
    poolWaitMs: c.pgPoolWaitMs,
  };
}
