import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at a time on the 2-core CI machine (the default is one fewer than the cores): the
    // outage suites spend minutes waiting on a store that refuses connections, and others run meanwhile.
    maxWorkers: 2,
    // FERRY_TEST_DATABASE=postgres: one PostgreSQL cluster for the run (the hosted suites on it);
    // FERRY_TEST_S3=rgw: one Ceph cluster and its RADOS Gateway (the external-S3 suites on it).
    globalSetup: ['test/helpers/postgresGlobal.ts', 'test/helpers/cephGlobal.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    reporters: ['default', 'json'],
    outputFile: { json: '.test-results/vitest.json' },
  },
});
