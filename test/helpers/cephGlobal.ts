// vitest globalSetup: with FERRY_TEST_S3=rgw, one throwaway Ceph cluster and its
// RADOS Gateway for the whole run (scripts/ceph-cluster.mjs), named to the test
// processes (started after this, so they inherit it) in FERRY_TEST_RGW_URL,
// FERRY_TEST_RGW_KEYS and FERRY_TEST_RGW_OTHER_KEYS (a user who owns nothing); killed and removed when the run ends, failed or not.
// @ts-expect-error plain JavaScript, shared with scripts/test.mjs
import { startCephCluster } from '../../scripts/ceph-cluster.mjs';

export default async function setup() {
  if (process.env.FERRY_TEST_S3 !== 'rgw' || process.env.FERRY_TEST_RGW_URL) return;
  type Keys = { accessKey: string; secretKey: string };
  const cluster = (await startCephCluster()) as Keys & { endpoint: string; other: Keys; startedInMs: number; stop(): void };
  console.log(`Ceph RADOS Gateway at ${cluster.endpoint}, started in ${(cluster.startedInMs / 1000).toFixed(1)} s`);
  process.env.FERRY_TEST_RGW_URL = cluster.endpoint;
  process.env.FERRY_TEST_RGW_KEYS = `${cluster.accessKey}:${cluster.secretKey}`;
  process.env.FERRY_TEST_RGW_OTHER_KEYS = `${cluster.other.accessKey}:${cluster.other.secretKey}`;
  // Killed also when the run is interrupted, so no daemon outlives it.
  const onSignal = () => {
    cluster.stop();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cluster.stop();
  };
}
