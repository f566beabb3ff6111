import { defineConfig } from 'vitest/config';

// Tests that need no database (nor Redis, nor child processes): the pure rules of test/domain and modules
// tested without I/O. `npm run test:unit` runs only these, on a machine without PostgreSQL.
const UNIT = [
  'test/domain/**/*.test.ts',
  'test/bench/run.test.ts',
  'test/platform/cache/ttl-cache.test.ts',
  'test/platform/config.test.ts',
  'test/platform/db/{attempts,shares,timeouts}.test.ts',
  'test/platform/jobs/coalescing.test.ts',
  'test/platform/http/{booleans,dates,ids,openapi-document,problem,response}.test.ts',
  'test/platform/net/public-address.test.ts',
  'test/platform/rate-limit/token-bucket.test.ts',
  'test/platform/tenancy/settings.test.ts',
  'test/platform/webhooks/signature.test.ts',
  'test/resources/webhooks/admin-address.test.ts',
  'test/security/{session-state,sql-qualified}.test.ts',
  'test/scripts/import-graph.test.ts',
  'test/scripts/check-edges.test.ts',
];

// Two projects, both run by `npm test`: `unit` (above) and `integration` (every other test), which gets a
// throwaway database created once per run by the global setup, and a fresh tenant schema per test file.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // zod's messages, as every entry point sets them (src/platform/http/validation.ts configureZod, issue 26).
    setupFiles: ['test/harness/setup.ts'],
    // Integration tests read their own writes at once; the public list cache has its own test. Webhook secrets
    // are sealed with a test-only key (issue 22), in this process and the service processes tests start.
    env: { LOG_LEVEL: 'silent', TZ: 'UTC', PUBLIC_CACHE_MS: '0', SECRETS_KEY: 'dGVzdC1vbmx5LXNlY3JldHMta2V5LTMyLWJ5dGVzISE=' },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT, globalSetup: ['test/harness/global-setup.ts'] },
      },
    ],
  },
});
