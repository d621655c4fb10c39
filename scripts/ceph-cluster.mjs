// A throwaway one-node Ceph cluster with its RADOS Gateway, for the tests that
// run Ferry's external-S3 mode against a store that is not Ferry's own: one
// monitor, one OSD on memstore (in memory), pool size 1, no cephx (so
// `ms mon client mode = crc`: radosgw then reaches the monitor without keys),
// everything on 127.0.0.1 on free ports, in a temporary directory. An S3 user
// gets fixed keys (radosgw-admin), and so does a second one who owns nothing. Used by scripts/test.mjs (is one possible
// here?) and test/helpers/cephGlobal.ts (start, stop).
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './postgres-cluster.mjs';

const PROGRAMS = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph', 'monmaptool'];

function which(name) {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin']) {
    if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** Why no cluster can be started here, or undefined when one can. */
export function cephUnavailable() {
  const missing = PROGRAMS.filter((p) => !which(p));
  if (missing.length > 0) return `Ceph is not installed (${missing.join(', ')} not found; Debian: apt-get install radosgw ceph-mon ceph-osd)`;
  return undefined;
}


/** Runs a Ceph tool to its end; its output, or an error carrying its stderr. */
function tool(conf, name, args, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    execFile(which(name), ['-c', conf, ...args], { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${name} ${args.join(' ')} failed: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it answers true, or fails naming `what` and the daemon's log. */
async function until(what, probe, timeoutMs, logFile) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > end) {
      const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '(no log)';
      throw new Error(`Ceph: ${what} did not happen within ${timeoutMs / 1000} s; ${path.basename(logFile)} ends:\n${tail}`);
    }
    await sleep(200);
  }
}

/**
 * Starts a cluster and its gateway; returns the gateway's endpoint, the S3 keys
 * of its user (and of `other`, a second user), and stop(), which kills the daemons and removes the directory.
 */
export async function startCephCluster() {
  const why = cephUnavailable();
  if (why) throw new Error(`cannot start Ceph: ${why}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-ceph-'));
  const daemons = [];
  const stop = () => {
    for (const d of daemons) if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [monPort, rgwPort] = [await freePort(), await freePort()];
    const fsid = randomUUID();
    const conf = path.join(dir, 'ceph.conf');
    for (const sub of ['mon', 'osd', 'run', 'log', 'rgw']) fs.mkdirSync(path.join(dir, sub));
    fs.writeFileSync(
      conf,
      `[global]
fsid = ${fsid}
mon host = [v2:127.0.0.1:${monPort}]
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = false
ms mon client mode = crc
ms mon cluster mode = crc
ms mon service mode = crc
ms client mode = crc
ms cluster mode = crc
ms service mode = crc
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
pid file = ${dir}/run/$name.pid
log to stderr = false
err to stderr = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0

[mon]
mon data = ${dir}/mon/$id
mon initial members = a

[osd]
osd data = ${dir}/osd/$id
osd objectstore = memstore
memstore device bytes = 1073741824
osd max object name len = 256
osd max object namespace len = 64

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
rgw dns name = 127.0.0.1
`,
    );
    const started = Date.now();
    await tool(conf, 'monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, path.join(dir, 'monmap')]);
    await tool(conf, 'ceph-mon', ['--mkfs', '-i', 'a', '--monmap', path.join(dir, 'monmap')]);
    const daemon = (name, args) => {
      const child = spawn(which(name), ['-f', '-c', conf, ...args], { stdio: 'ignore' });
      daemons.push(child);
      return child;
    };
    daemon('ceph-mon', ['-i', 'a']);
    const monLog = path.join(dir, 'log', 'mon.a.log');
    await until('the monitor answering', async () => (await tool(conf, 'ceph', ['mon', 'stat'], 10_000)).includes('quorum'), 30_000, monLog);

    const id = (await tool(conf, 'ceph', ['osd', 'create'])).trim();
    fs.mkdirSync(path.join(dir, 'osd', id));
    await tool(conf, 'ceph-osd', ['-i', id, '--mkfs']);
    daemon('ceph-osd', ['-i', id]);
    await until('the OSD coming up', async () => JSON.parse(await tool(conf, 'ceph', ['osd', 'stat', '-f', 'json'], 10_000)).num_up_osds >= 1, 60_000, path.join(dir, 'log', `osd.${id}.log`));

    const admin = (args) => tool(conf, 'radosgw-admin', ['-n', 'client.admin', ...args]);
    // The S3 user first: that makes the default zone and zonegroup.
    const accessKey = 'FERRYRGWTESTKEY00001';
    const secretKey = 'ferry-rgw-test-secret-key-not-the-embedded-stores';
    await admin(['user', 'create', '--uid=ferry', '--display-name=Ferry tests', `--access-key=${accessKey}`, `--secret=${secretKey}`]);
    // A second user, who owns no bucket of the first: for what a store refuses to credentials without the right.
    const other = { accessKey: 'FERRYRGWOTHERKEY0001', secretKey: 'ferry-rgw-test-secret-of-a-user-owning-nothing' };
    await admin(['user', 'create', '--uid=other', '--display-name=Another user', `--access-key=${other.accessKey}`, `--secret=${other.secretKey}`]);
    // The gateway knows only the storage classes its zone lists: one besides STANDARD, as AWS names it,
    // for the connections that choose one (set before the gateway starts, which reads it once).
    await admin(['zonegroup', 'placement', 'add', '--rgw-zonegroup=default', '--placement-id=default-placement', '--storage-class=STANDARD_IA']);
    await admin(['zone', 'placement', 'add', '--rgw-zone=default', '--placement-id=default-placement', '--storage-class=STANDARD_IA', '--data-pool=default.rgw.standard-ia.data']);
    daemon('radosgw', ['-n', 'client.rgw']);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    await until('the gateway answering', async () => (await fetch(endpoint, { signal: AbortSignal.timeout(5000) })).status < 500, 60_000, path.join(dir, 'log', 'client.rgw.log'));

    return { endpoint, accessKey, secretKey, other, startedInMs: Date.now() - started, dir, conf, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

// Run alone (`node scripts/ceph-cluster.mjs`): start one, say how long it took and where it is, and stop it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const why = cephUnavailable();
  if (why) {
    console.error(why);
    process.exit(1);
  }
  const c = await startCephCluster();
  console.log(`RADOS Gateway at ${c.endpoint} (access key ${c.accessKey}) in ${c.startedInMs} ms`);
  c.stop();
}
