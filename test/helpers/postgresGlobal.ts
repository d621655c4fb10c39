// vitest globalSetup: with FERRY_TEST_DATABASE=postgres, one throwaway PostgreSQL
// cluster for the whole run (or the server FERRY_TEST_POSTGRES_URL names), handed
// to the tests as inject('postgresUrl'); stopped when the run ends.
import type { TestProject } from 'vitest/node';
// @ts-expect-error plain JavaScript, shared with scripts/test.mjs
import { startCluster } from '../../scripts/postgres-cluster.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the cluster the hosted tests run on; '' for SQLite. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.FERRY_TEST_DATABASE !== 'postgres') {
    project.provide('postgresUrl', '');
    return;
  }
  if (process.env.FERRY_TEST_POSTGRES_URL) {
    project.provide('postgresUrl', process.env.FERRY_TEST_POSTGRES_URL);
    return;
  }
  const cluster = (await startCluster()) as { url: string; stop(): void };
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
