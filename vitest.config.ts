import { defineConfig } from 'vitest/config';

// Unit tests (test/domain, pure modules) need no database; integration tests get a throwaway database
// created once per run by the global setup, and a fresh tenant schema per test file.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/harness/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests read their own writes at once; the public list cache has its own test.
    env: { LOG_LEVEL: 'silent', TZ: 'UTC', PUBLIC_CACHE_MS: '0' },
  },
});
