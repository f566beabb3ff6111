// Environment of D1, read once at start.
export type Role = 'api' | 'worker' | 'all';

export type Config = {
  databaseUrl?: string;
  redisUrl?: string;
  port: number;
  smtpUrl?: string;
  trustProxy: boolean;
  logLevel: string;
  dataDir: string;
  tenantsDir: string;
  /** `DEMO`: 1/true/yes registers and fills the demo municipality, 0/false/no never; unset: only with the embedded database. */
  demo?: boolean;
  /** When set, `/metrics` needs `Authorization: Bearer <token>`. */
  metricsToken?: string;
};

/** An on/off setting: true for 1/true/yes/on, false for 0/false/no/off (any case), undefined otherwise. */
export function flag(value: string | undefined): boolean | undefined {
  const v = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  return undefined;
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    port: Number(env.PORT || 8080),
    smtpUrl: env.SMTP_URL || undefined,
    trustProxy: ['1', 'true', 'yes'].includes((env.TRUST_PROXY ?? '').toLowerCase()),
    logLevel: env.LOG_LEVEL || 'info',
    dataDir: env.DATA_DIR || '.data',
    tenantsDir: env.TENANTS_DIR || 'tenants',
    demo: flag(env.DEMO),
    metricsToken: env.METRICS_TOKEN || undefined,
  };
}

/**
 * Issue 23: the database's timeouts and shares of the pool, in one place (README "Configuration",
 * docs/operations.md "When the database is busy"). Milliseconds are whole numbers ≥ 0 (0: no limit); shares are
 * fractions 0 < x ≤ 1 of a process's pool. A value that does not parse falls back to the default.
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

function millis(value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  return Number.isInteger(n) && n >= min ? n : fallback;
}

function share(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value.trim() !== '' && n > 0 && n <= 1 ? n : fallback;
}

export function databaseSettings(env: NodeJS.ProcessEnv = process.env): DatabaseSettings {
  return {
    timeouts: {
      request: { lockMs: millis(env.PG_LOCK_TIMEOUT_MS, 3_000), statementMs: millis(env.PG_STATEMENT_TIMEOUT_MS, 30_000) },
      job: { lockMs: millis(env.PG_JOB_LOCK_TIMEOUT_MS, 30_000), statementMs: millis(env.PG_JOB_STATEMENT_TIMEOUT_MS, 600_000) },
      migration: { lockMs: millis(env.PG_MIGRATION_LOCK_TIMEOUT_MS, 60_000), statementMs: millis(env.PG_MIGRATION_STATEMENT_TIMEOUT_MS, 0) },
      idleInTransactionMs: millis(env.PG_IDLE_IN_TRANSACTION_TIMEOUT_MS, 60_000),
    },
    tenantPoolShare: share(env.PG_TENANT_POOL_SHARE, 0.6),
    offerPoolShare: share(env.PG_OFFER_POOL_SHARE, 0.2),
    poolWaitMs: millis(env.PG_POOL_WAIT_MS, 5_000, 1),
  };
}
