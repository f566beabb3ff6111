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
