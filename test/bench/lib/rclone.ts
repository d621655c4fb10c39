// rclone (Debian's package) as a peer client of the store `ferry serve` runs,
// configured through the environment so no config file is written.
import { execFile } from 'node:child_process';
import { loadOrCreateStoreCredentials } from '../../../src/objectstore/index.js';
import { MiB } from './loopback.js';
import type { ServedService } from './processes.js';

/** A store rclone can reach: the embedded one of a service (its keys are in its data dir), or one whose keys are given. */
export type RcloneTarget = Pick<ServedService, 's3Url' | 'dataDir'> | { s3Url: string; creds: { accessKey: string; secretKey: string } };

/** Runs `rclone ARGS` against the store (remote `ferry:`); resolves the milliseconds it took. */
export async function rclone(svc: RcloneTarget, timeoutMs: number, args: string[]): Promise<number> {
  return (await rcloneMeasured(svc, timeoutMs, args)).ms;
}

/**
 * As `rclone`, and the CPU seconds rclone spent (user + system): it runs under
 * bash, whose `times` prints its children's, so a run is measured whole.
 */
export async function rcloneMeasured(svc: RcloneTarget, timeoutMs: number, args: string[]): Promise<{ ms: number; cpuS: number }> {
  const creds = 'creds' in svc ? svc.creds : await loadOrCreateStoreCredentials(svc.dataDir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RCLONE_CONFIG_FERRY_TYPE: 's3',
    RCLONE_CONFIG_FERRY_PROVIDER: 'Other',
    RCLONE_CONFIG_FERRY_ENDPOINT: svc.s3Url,
    RCLONE_CONFIG_FERRY_ACCESS_KEY_ID: creds.accessKey,
    RCLONE_CONFIG_FERRY_SECRET_ACCESS_KEY: creds.secretKey,
    RCLONE_CONFIG_FERRY_FORCE_PATH_STYLE: 'true',
    RCLONE_CONFIG_FERRY_REGION: 'us-east-1',
    // The bucket exists; rclone need not try to create it on every call.
    RCLONE_CONFIG_FERRY_NO_CHECK_BUCKET: 'true',
  };
  delete env.AWS_CA_BUNDLE;
  const t = performance.now();
  const script = 'rclone "$@"; rc=$?; echo "@@times" >&2; times >&2; exit $rc';
  return new Promise((ok, fail) => {
    execFile('bash', ['-c', script, 'rclone', ...args], { env, timeout: timeoutMs, maxBuffer: 16 * MiB }, (err, _out, stderr) => {
      if (err) return fail(new Error(`rclone ${args.join(' ')}: ${err.message}\n${stderr}`));
      // `times`: the shell's user and system time, then its children's ("0m1.234s 0m0.567s").
      const children = stderr.slice(stderr.lastIndexOf('@@times')).split('\n')[2] ?? '';
      const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
      ok({ ms: performance.now() - t, cpuS: secs });
    });
  });
}
