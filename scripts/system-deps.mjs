// The system programs the test suites drive, checked before `npm test` runs
// anything: Chromium (the app's Playwright tests), clamd (malware scanning),
// nginx (the deployment suites), PostgreSQL (the hosted suites' second pass),
// rclone (a real S3 client) and Ceph's monitor, OSD and RADOS Gateway (a second,
// real S3 store for the external-S3 suites). Missing ones are installed where that is possible
// (root, with apt-get: Debian's packages, no service started); otherwise the run
// stops at once with the one command that installs them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { postgresBin } from './postgres-cluster.mjs';

const onPath = (name) => spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;

/** Debian's package for each program, and how to tell it is there. */
export const SYSTEM_DEPS = [
  { pkg: 'chromium', why: "the app's Playwright tests", present: () => onPath('chromium') },
  { pkg: 'clamav-daemon', why: 'the malware-scanning tests (a real clamd)', present: () => onPath('clamd') || fs.existsSync('/usr/sbin/clamd') },
  { pkg: 'nginx', why: 'the deployment suites (several instances behind nginx)', present: () => onPath('nginx') || fs.existsSync('/usr/sbin/nginx') },
  { pkg: 'postgresql', why: 'the hosted suites on PostgreSQL', present: () => postgresBin() !== undefined },
  { pkg: 'rclone', why: 'a real S3 client against the embedded store', present: () => onPath('rclone') },
  // A one-node Ceph cluster (scripts/ceph-cluster.mjs): a second, real S3 store for the external-S3 suites.
  { pkg: 'ceph-mon', why: "Ceph's monitor (the external-S3 suites on the RADOS Gateway)", present: () => onPath('ceph-mon') && onPath('monmaptool') && onPath('ceph') },
  { pkg: 'ceph-osd', why: "Ceph's object store daemon (the external-S3 suites on the RADOS Gateway)", present: () => onPath('ceph-osd') },
  { pkg: 'radosgw', why: "Ceph's S3 gateway (the external-S3 suites on the RADOS Gateway)", present: () => onPath('radosgw') && onPath('radosgw-admin') },
];

/** Installs what is missing when root with apt-get; answers the packages still missing. */
export function ensureSystemDeps(log = console.log) {
  let missing = SYSTEM_DEPS.filter((d) => !d.present());
  if (missing.length === 0) return [];
  const canInstall = process.getuid?.() === 0 && onPath('apt-get');
  if (canInstall) {
    log(`Installing ${missing.map((d) => d.pkg).join(', ')} (apt-get; no service is started)`);
    // Debian's container images deny starting services on install this way; the tests start their own.
    const deny = '/usr/sbin/policy-rc.d';
    const denied = !fs.existsSync(deny);
    if (denied) fs.writeFileSync(deny, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing.map((d) => d.pkg)], { stdio: ['ignore', 'ignore', 'inherit'], env });
    } finally {
      if (denied) fs.rmSync(deny, { force: true });
    }
    missing = missing.filter((d) => !d.present());
  }
  return missing;
}

// Run alone (`node scripts/system-deps.mjs`): install or say what is missing.
if (import.meta.url === `file://${process.argv[1]}`) {
  const missing = ensureSystemDeps();
  if (missing.length > 0) {
    for (const d of missing) console.error(`missing: ${d.pkg} (${d.why})`);
    console.error(`Install them with: sudo apt-get install -y --no-install-recommends ${missing.map((d) => d.pkg).join(' ')}`);
    process.exit(1);
  }
}
