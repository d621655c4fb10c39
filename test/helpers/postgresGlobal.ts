// vitest globalSetup: with FERRY_TEST_DATABASE=postgres, one throwaway PostgreSQL
// cluster for the whole run, named to the test processes (started after this, so
// they inherit it) in FERRY_TEST_POSTGRES_URL; stopped when the run ends. A URL
// given beforehand points the run at that server instead.
// @ts-expect-error plain JavaScript, shared with scripts/test.mjs
import { startCluster } from '../../scripts/postgres-cluster.mjs';

export default async function setup() {
  if (process.env.FERRY_TEST_DATABASE !== 'postgres' || process.env.FERRY_TEST_POSTGRES_URL) return;
  const cluster = (await startCluster()) as { url: string; stop(): void };
  process.env.FERRY_TEST_POSTGRES_URL = cluster.url;
  return () => cluster.stop();
}
