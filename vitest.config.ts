import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // FERRY_TEST_DATABASE=postgres: one PostgreSQL cluster for the run (the hosted suites on it).
    globalSetup: ['test/helpers/postgresGlobal.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    reporters: ['default', 'json'],
    outputFile: { json: '.test-results/vitest.json' },
  },
});
