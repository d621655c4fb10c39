// Transfers caught mid-way: the customer's bucket is reached through a proxy
// that holds the upload of one part, so a transfer is certainly in progress
// when the connection is deleted (it finishes), when the service is stopped
// and started again (it resumes, sending no stored part twice), and when the
// service is killed with SIGKILL and started again (it completes).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { MiB, createPackage, downloadAll, finalizePackage, makeLink, uploadFile, type Pkg } from '../../helpers/flow.js';
import { waitFor } from '../../helpers/downloads.js';
import { startCustomerBucket, type CustomerBucket } from '../../helpers/bucket.js';
import { jsonLine, startFerry, type Running } from '../../helpers/cli.js';
import { freePort } from '../../helpers/ports.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const PART = 5 * MiB;
/** One part at a time, so "held at part 3" means parts 1 and 2 are stored. */
// The customer's bucket is on 127.0.0.1 on purpose: the outbound guard allows that address here.
const FLAGS = { 'cloud-part-size': String(PART), 'cloud-part-concurrency': '1', 'cloud-retry-base-ms': '50', 'jobs-poll-ms': '50', 'allow-private-targets': '127.0.0.1/32' };

const SMALL = randomBytes(50_000);
const BIG = randomBytes(4 * PART + 999);

let bucket: CustomerBucket;

beforeAll(async () => {
  bucket = await startCustomerBucket({ proxied: true });
});
afterAll(async () => bucket?.close());
afterEach(() => {
  bucket.proxy!.rule = () => 'pass';
  bucket.proxy!.release();
});

const partOf = (query: string) => Number(/(?:^|&)partNumber=(\d+)/.exec(query)?.[1] ?? 0);
/** Holds the upload of part `n` of any object; everything else passes. */
const holdPart = (n: number) => {
  bucket.proxy!.rule = (r) => (r.method === 'PUT' && partOf(r.query) === n ? 'hold' : 'pass');
};
const puts = (keyPart: string) => bucket.proxy!.seen.filter((s) => s.method === 'PUT' && decodeURIComponent(s.path).includes(keyPart));

/** A Team Package holding SMALL (sent first) and BIG (in parts), finalized. */
async function twoFilePackage(base: { url: string }, actor: Actor, name: string): Promise<Pkg> {
  const svcLike = base as TestService;
  const pkg = await createPackage(svcLike, actor, { name });
  await uploadFile(svcLike, pkg, 'a-small.bin', '', SMALL);
  await uploadFile(svcLike, pkg, 'b-big.bin', 'media', BIG);
  await finalizePackage(svcLike, pkg);
  return pkg;
}

async function newConnection(base: string, h: Record<string, string>, teamId: string, target: string): Promise<string> {
  const r = await call(base, 'POST', `/v1/teams/${teamId}/cloud_connections`, { headers: h, body: { provider: 'generic_s3', authorization: bucket.authorization(), target_directory_id: target } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

async function transferTo(base: string, h: Record<string, string>, pkg: Pkg, connectionId: string): Promise<string> {
  const r = await call(base, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: h, body: { cloud_connection_id: connectionId } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

const record = async (base: string, h: Record<string, string>, pkg: Pkg, id: string) => (await call(base, 'GET', `/v1/packages/${pkg.id}/transfers/${id}`, { headers: h })).body;
const ended = (base: string, h: Record<string, string>, pkg: Pkg, id: string) =>
  waitFor(`transfer ${id} to end`, async () => {
    const t = await record(base, h, pkg, id);
    return t.state === 'complete' || t.state === 'error' ? t : undefined;
  });

async function expectDelivered(folder: string) {
  expect(await bucket.keys(`${folder}/`)).toEqual([`${folder}/a-small.bin`, `${folder}/media/b-big.bin`]);
  expect((await bucket.get(`${folder}/a-small.bin`)).equals(SMALL)).toBe(true);
  expect(sha(await bucket.get(`${folder}/media/b-big.bin`))).toBe(sha(BIG));
}

describe('in-process service', () => {
  const running: TestService[] = [];
  afterAll(async () => {
    for (const s of running) await s.close();
  });

  it('a connection deleted while its transfer runs: 204 at once, the transfer finishes, then the connection is gone for good', async () => {
    const svc = await startTestService(FLAGS);
    running.push(svc);
    const owner = await ownerActor(svc);
    const connId = await newConnection(svc.url, owner.h, owner.teamId, 'deleted');
    const pkg = await twoFilePackage(svc, owner, 'Deleted midway');
    holdPart(2);
    const id = await transferTo(svc.url, owner.h, pkg, connId);
    await waitFor('part 2 to be held', () => (bucket.proxy!.held() === 1 ? true : undefined));

    expect((await call(svc.url, 'DELETE', `/v1/cloud_connections/${connId}`, { headers: owner.h })).status).toBe(204);
    expect((await call(svc.url, 'GET', `/v1/cloud_connections/${connId}`, { headers: owner.h })).status).toBe(404);
    const list = await call(svc.url, 'GET', `/v1/teams/${owner.teamId}/cloud_connections`, { headers: owner.h });
    expect(list.body.map((c: any) => c.id)).not.toContain(connId);
    expect((await record(svc.url, owner.h, pkg, id)).state).toBe('running');
    // Hidden, not gone: the transfer still needs its credentials.
    expect(await svc.ctx.db.selectFrom('cloud_connections').select('deleted_at').where('id', '=', connId).executeTakeFirst()).toMatchObject({ deleted_at: expect.any(String) });
    // And no new transfer can be started with it.
    expect((await call(svc.url, 'POST', `/v1/packages/${pkg.id}/transfer`, { headers: owner.h, body: { cloud_connection_id: connId } })).status).toBe(404);

    bucket.proxy!.rule = () => 'pass';
    bucket.proxy!.release();
    const t = await ended(svc.url, owner.h, pkg, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_done: 2 });
    await expectDelivered(`deleted/Deleted midway (${pkg.id})`);
    await waitFor('the deleted connection to be removed', async () =>
      (await svc.ctx.db.selectFrom('cloud_connections').select('id').where('id', '=', connId).executeTakeFirst()) ? undefined : true,
    );
  });

  it('a service stopped mid-delivery resumes when started again, without sending the stored object or parts again', async () => {
    const first = await startTestService(FLAGS);
    const dataDir = first.dataDir;
    let firstStopped = false;
    onTestFinished(async () => {
      if (!firstStopped) await first.close();
    });
    const owner = await ownerActor(first);
    const connId = await newConnection(first.url, owner.h, owner.teamId, 'restarted');
    const pkg = await twoFilePackage(first, owner, 'Restarted midway');
    bucket.proxy!.seen.length = 0;
    holdPart(3);
    const id = await transferTo(first.url, owner.h, pkg, connId);
    await waitFor('part 3 to be held', () => (bucket.proxy!.held() === 1 ? true : undefined));
    expect((await record(first.url, owner.h, pkg, id)).bytes_done).toBe(SMALL.length + 2 * PART);

    // A graceful stop interrupts the transfer between requests; it is queued again, the attempt not counted.
    await first.stop();
    firstStopped = true;
    bucket.proxy!.rule = () => 'pass';
    const svc = await startTestService(FLAGS, dataDir);
    running.push(svc);
    const t = await ended(svc.url, owner.h, pkg, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_done: 2, bytes_done: SMALL.length + BIG.length, attempts: 1 });
    await expectDelivered(`restarted/Restarted midway (${pkg.id})`);

    const small = puts('a-small.bin');
    expect(small).toHaveLength(1);
    const parts = puts('b-big.bin').filter((s) => partOf(s.query) > 0).map((s) => partOf(s.query));
    // Parts 1 and 2 were stored before the stop and are not sent again; part 3 was cut off and is.
    expect(parts.sort()).toEqual([1, 2, 3, 3, 4, 5]);
  });

  it('cloud_to_svc stopped mid-way resumes after a restart without reading stored parts again, and finalizes the Package', async () => {
    await bucket.put('ingest/day2/small.bin', SMALL);
    await bucket.put('ingest/day2/media/big.bin', BIG);
    const first = await startTestService(FLAGS);
    let firstStopped = false;
    onTestFinished(async () => {
      if (!firstStopped) await first.close();
    });
    const owner = await ownerActor(first);
    const conn = await call(first.url, 'POST', `/v1/teams/${owner.teamId}/cloud_connections`, {
      headers: owner.h,
      body: { provider: 'generic_s3', direction: 'cloud_to_svc', authorization: bucket.authorization(), source_directory_ids: ['ingest/day2'] },
    });
    const pkg = await createPackage(first, owner, { name: 'Imported' });
    bucket.proxy!.seen.length = 0;
    // Hold the read of the big object's third part.
    bucket.proxy!.rule = (r) => (r.method === 'GET' && r.range?.[0] === 2 * PART ? 'hold' : 'pass');
    const id = await transferTo(first.url, owner.h, pkg, conn.body.id);
    await waitFor('part 3 to be held', () => (bucket.proxy!.held() === 1 ? true : undefined));
    await first.stop();
    firstStopped = true;
    bucket.proxy!.rule = () => 'pass';
    const svc = await startTestService(FLAGS, first.dataDir);
    running.push(svc);
    const t = await ended(svc.url, owner.h, pkg, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_done: 2, attempts: 1 });
    const reads = bucket.proxy!.seen.filter((r) => r.method === 'GET' && decodeURIComponent(r.path).endsWith('big.bin')).map((r) => r.range![0] / PART);
    expect(reads.sort()).toEqual([0, 1, 2, 2, 3, 4]);
    const files = await downloadAll(svc, await makeLink(svc, pkg));
    expect(files.get('day2/small.bin')!.equals(SMALL)).toBe(true);
    expect(sha(files.get('day2/media/big.bin')!)).toBe(sha(BIG));
  });
});

describe('ferry serve as a process', () => {
  let tmp: string;
  let serve: Running | undefined;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-cloud-kill-'));
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function start(port: number): Promise<string> {
    serve = startFerry([
      'serve', '--listen', `127.0.0.1:${port}`, '--s3-listen', '127.0.0.1:0', '--data-dir', tmp, '--init-owner', 'boss@example.com:correct horse',
      // A short lease: the job of a killed process is taken over a second after it died.
      '--jobs-lease-ms', '1000', '--jobs-poll-ms', '50', '--cloud-part-size', String(PART), '--cloud-part-concurrency', '1', '--cloud-retry-base-ms', '50',
      // The customer's bucket is on 127.0.0.1 on purpose: the outbound guard allows that address here.
      '--allow-private-targets', '127.0.0.1/32',
    ]);
    const ready = await serve.waitFor((l) => jsonLine(l)?.msg === 'ferry hosted service ready', 'the ready line');
    return jsonLine(ready)!.url as string;
  }

  it('a service killed with SIGKILL mid-delivery completes it once started again', async () => {
    const port = await freePort();
    const url = await start(port);
    const auth = await call(url, 'POST', '/v1/auth', { body: { email: 'boss@example.com', password: 'correct horse' } });
    expect(auth.status).toBe(200);
    const h = { 'x-user-token': auth.body.token };
    const teams = await call(url, 'GET', '/v1/teams', { headers: h });
    const actor = { teamId: teams.body[0].id, h } as unknown as Actor;
    const connId = await newConnection(url, h, actor.teamId, 'killed');
    const pkg = await twoFilePackage({ url }, actor, 'Killed midway');
    bucket.proxy!.seen.length = 0;
    holdPart(3);
    const id = await transferTo(url, h, pkg, connId);
    await waitFor('part 3 to be held', () => (bucket.proxy!.held() === 1 ? true : undefined));

    await serve!.stop('SIGKILL');
    bucket.proxy!.rule = () => 'pass';
    const again = await start(port);
    const t = await ended(again, h, pkg, id);
    expect(t, JSON.stringify(t)).toMatchObject({ state: 'complete', files_done: 2, bytes_done: SMALL.length + BIG.length });
    // The dead process's attempt counts: its lease ran out and the next attempt resumed the transfer.
    expect(t.attempts).toBe(2);
    await expectDelivered(`killed/Killed midway (${pkg.id})`);
    expect(puts('a-small.bin')).toHaveLength(1);
    expect(puts('b-big.bin').filter((s) => partOf(s.query) > 0).map((s) => partOf(s.query)).sort()).toEqual([1, 2, 3, 3, 4, 5]);
    expect(await serve!.stop('SIGTERM')).toBe(0);
  });
});
