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
};

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
  };
}
