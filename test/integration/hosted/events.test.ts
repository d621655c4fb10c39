// Realtime events (docs/hosted-api-notes/events.md): the Package and Team
// Server-Sent Events streams, who may open them, the events of a real upload to
// the embedded store in order with ids, replay after Last-Event-ID, reset when a
// replay cannot be complete, retention, the Team stream's visibility, and streams
// ended by a stopping service.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { newActor, type Actor } from '../../helpers/auth.js';
import { createPackage, finalizeFile, finalizePackage, makeLink, MiB, putWith, register, type Pkg } from '../../helpers/flow.js';
import { openEventStream, type EventStream, type SseMessage } from '../../helpers/agent.js';
import { sweepEvents, EVENT_RETENTION_MS } from '../../../src/hosted/services/events.js';
import { partProgress } from '../../../src/hosted/events/partProgress.js';

let svc: TestService;
let owner: Actor;
let member: Actor;
let stranger: Actor;
const open: EventStream[] = [];
/** How far each stream's messages were handed out by until(). */
const handed = new WeakMap<EventStream, number>();

beforeAll(async () => {
  svc = await startTestService();
  owner = await newActor(svc, 'events-owner@example.com');
  member = await newActor(svc, 'events-member@example.com', { teamId: owner.teamId, role: 'member' });
  stranger = await newActor(svc, 'events-stranger@example.com');
});
afterAll(async () => {
  for (const s of open) s.close();
  await svc?.close();
});

/** `base`/events, with `query`. */
async function stream(base: string, headers: Record<string, string> = {}, query?: string): Promise<EventStream> {
  const s = await openEventStream(svc.url + base, { headers, ...(query ? { query } : {}) });
  open.push(s);
  return s;
}
const pkgStream = (pkg: Pkg, headers: Record<string, string> = pkg.h) => stream(`/v1/packages/${pkg.id}`, headers);
const teamStream = (who: Actor, headers: Record<string, string> = who.h) => stream(`/v1/teams/${who.teamId}`, headers);
/** Every message after those handed out before, up to the first that `pred` accepts. */
async function until(s: EventStream, pred: (m: SseMessage) => boolean): Promise<SseMessage[]> {
  const from = handed.get(s) ?? 0;
  await vi.waitFor(() => expect(s.received.slice(from).some(pred)).toBe(true), { timeout: 10_000, interval: 20 });
  const end = from + s.received.slice(from).findIndex(pred) + 1;
  handed.set(s, end);
  return s.received.slice(from, end);
}
/** The next message. */
const next = async (s: EventStream) => (await until(s, () => true))[0]!;
const dataOf = (m: SseMessage) => m.json;
const typeIs = (t: string) => (m: SseMessage) => m.event === t;
const ids = (ms: SseMessage[]) => ms.map((m) => Number(m.id));

/** Registers a file of `size` bytes with its upload started by the service and its part blueprints signed. */
async function registered(pkg: Pkg, name: string, size: number, parts: number) {
  const reg = await register(svc, pkg, { name, size }, parts);
  return { fileId: reg.file.id as string, uploadId: reg.upload_id!, blueprints: reg.upload_blueprints! };
}

describe('who may open a stream', () => {
  it('a Package stream: any token of that Package (the creator, a Link) or a member; 401 without or with a bad token, 404 for another Package or Team', async () => {
    const pkg = await createPackage(svc, owner);
    const other = await createPackage(svc, owner);
    const creator = await pkgStream(pkg);
    expect(creator.status).toBe(200);
    expect(creator.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect((await pkgStream(pkg, member.h)).status).toBe(200);
    expect((await pkgStream(pkg, {})).status).toBe(401);
    expect((await pkgStream(pkg, { 'x-package-token': 'not-a-token' })).status).toBe(401);
    expect((await pkgStream(pkg, other.h)).status).toBe(404);
    expect((await pkgStream(pkg, stranger.h)).status).toBe(404);
  });

  it("a Link's read-only token may watch its finalized Package (410 before, as for every read)", async () => {
    const pkg = await createPackage(svc, owner);
    await finalizePackage(svc, pkg);
    const link = await makeLink(svc, pkg);
    const info = await call(svc.url, 'GET', `/v1/links/${link.id}?secret=${encodeURIComponent(link.secret)}`);
    expect(info.status).toBe(200);
    const s = await pkgStream(pkg, { 'x-package-token': info.body.package_token });
    expect(s.status).toBe(200);
    const fresh = await createPackage(svc, owner);
    const readOnly = await svc.ctx.tokens.signPackage({ packageId: fresh.id, access: 'read' });
    expect((await pkgStream(fresh, { 'x-package-token': readOnly })).status).toBe(410);
  });

  it('a Team stream: a member by API key or user token; 401 without or with a bad credential, 404 to a stranger', async () => {
    expect((await teamStream(owner)).status).toBe(200);
    expect((await teamStream(member, { 'x-user-token': member.userToken })).status).toBe(200);
    expect((await teamStream(owner, {})).status).toBe(401);
    expect((await teamStream(owner, { 'x-api-key': 'nope' })).status).toBe(401);
    expect((await stream(`/v1/teams/${owner.teamId}`, stranger.h)).status).toBe(404);
  });

  it('HEAD answers the headers of a stream and ends', async () => {
    const pkg = await createPackage(svc, owner);
    const before = svc.ctx.events.listening();
    const r = await fetch(`${svc.url}/v1/packages/${pkg.id}/events`, { method: 'HEAD', headers: pkg.h });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // No stream was left listening for it.
    expect(svc.ctx.events.listening()).toBe(before);
  });

  it('400 for a Last-Event-ID that is no event id', async () => {
    const pkg = await createPackage(svc, owner);
    const r = await pkgStream(pkg, { ...pkg.h, 'last-event-id': 'yesterday' });
    expect(r.status).toBe(400);
    expect((await stream(`/v1/packages/${pkg.id}`, pkg.h, 'last_event_id=abc')).status).toBe(400);
  });
});

describe('the events of an upload', () => {
  it('file registered, progress with the parts and bytes stored, file finalized, Package finalized: in order, with increasing ids', async () => {
    const pkg = await createPackage(svc, owner);
    const s = await pkgStream(pkg);
    const data = Buffer.alloc(6 * MiB, 7);
    const f = await registered(pkg, 'clip.mov', data.length, 2);
    const [reg] = await until(s, typeIs('file.registered'));
    expect(dataOf(reg!)).toMatchObject({ id: Number(reg!.id), type: 'file.registered', package_id: pkg.id, team_id: owner.teamId, portal_id: null, payload: { file_id: f.fileId, name: 'clip.mov', path: '', size: data.length, kind: 'file' } });

    const parts = await putWith(f.blueprints, data);
    // Coalesced: a progress event a second at most per file; the last one counts both parts.
    const progress = await until(s, (m) => m.event === 'file.progress' && dataOf(m).payload.parts === 2);
    expect(progress.every((m) => m.event === 'file.progress')).toBe(true);
    expect(dataOf(progress.at(-1)!).payload).toEqual({ file_id: f.fileId, upload_id: f.uploadId, parts: 2, bytes: data.length });
    for (const m of progress) expect(dataOf(m).payload.bytes).toBeLessThanOrEqual(data.length);

    expect((await finalizeFile(svc, pkg, f.fileId, f.uploadId, parts, data.length)).status).toBe(204);
    const fin = await until(s, typeIs('file.finalized'));
    expect(fin.map((m) => m.event)).toEqual(['file.finalized']);
    expect(dataOf(fin[0]!).payload).toMatchObject({ file_id: f.fileId, size: data.length });

    await finalizePackage(svc, pkg);
    const done = await until(s, typeIs('package.finalized'));
    expect(done.map((m) => m.event)).toEqual(['package.finalized']);
    expect(dataOf(done[0]!).payload).toMatchObject({ state: 'finalized', size: data.length, total_files: 1 });

    const all = [reg!, ...progress, ...fin, ...done];
    expect(ids(all)).toEqual([...ids(all)].sort((a, b) => a - b));
    expect(new Set(ids(all)).size).toBe(all.length);
    // What was written is what was sent.
    const rows = await svc.ctx.db.selectFrom('events').select(['id', 'type']).where('package_id', '=', pkg.id).where('type', '!=', 'package.created').orderBy('id').execute();
    expect(rows.map((r) => r.id)).toEqual(ids(all));
  });

  it('a thousand parts reported at once make one progress event now and one with the latest count after the window', async () => {
    const pkg = await createPackage(svc, owner);
    const f = await registered(pkg, 'big.bin', 1000 * 5 * MiB, 1);
    const progress = partProgress(svc.ctx);
    try {
      const key = `packages/${pkg.id}/${f.fileId}`;
      for (let n = 1; n <= 1000; n++) progress.stored({ bucket: svc.ctx.storage.bucket, key, uploadId: f.uploadId, partNumber: n, parts: n, bytes: n * 5 * MiB });
      // Not a file of a Package: ignored.
      progress.stored({ bucket: svc.ctx.storage.bucket, key: 'elsewhere/x', uploadId: 'u', partNumber: 1, parts: 1, bytes: 1 });
      const rows = () => svc.ctx.db.selectFrom('events').select('payload').where('package_id', '=', pkg.id).where('type', '=', 'file.progress').orderBy('id').execute();
      await vi.waitFor(async () => expect(await rows()).toHaveLength(2), { timeout: 10_000, interval: 50 });
      expect((await rows()).map((r) => JSON.parse(r.payload).parts)).toEqual([1, 1000]);
    } finally {
      await progress.stop();
    }
  });

  it('a batch registration raises one event per entry, a refused entry none', async () => {
    const pkg = await createPackage(svc, owner);
    const s = await pkgStream(pkg);
    const r = await call(svc.url, 'POST', `/v1/packages/${pkg.id}/register_files`, {
      headers: pkg.h,
      body: { files: [
        { kind: 'directory', name: 'shots', path: '', last_modified: '2024-05-01T10:00:00Z' },
        { kind: 'file', name: '..', path: '', last_modified: '2024-05-01T10:00:00Z', size: 3 },
        { kind: 'file', name: 'a.txt', path: 'shots', last_modified: '2024-05-01T10:00:00Z', size: 3 },
      ] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.results.map((x: any) => x.status)).toEqual([201, 400, 201]);
    const got = await until(s, (m) => dataOf(m).payload.name === 'a.txt');
    expect(got.map((m) => [m.event, dataOf(m).payload.name])).toEqual([['file.registered', 'shots'], ['file.registered', 'a.txt']]);
  });

  it('delete, archive and unarchive are events too', async () => {
    const pkg = await createPackage(svc, owner);
    const s = await pkgStream(pkg);
    expect((await call(svc.url, 'DELETE', `/v1/packages/${pkg.id}`, { headers: pkg.h })).status).toBe(204);
    expect((await call(svc.url, 'PUT', `/v1/packages/${pkg.id}/archive`, { headers: pkg.h })).status).toBe(204);
    expect((await call(svc.url, 'PUT', `/v1/packages/${pkg.id}/unarchive`, { headers: pkg.h })).status).toBe(204);
    const got = await until(s, typeIs('package.unarchived'));
    expect(got.map((m) => [m.event, dataOf(m).payload.state])).toEqual([
      ['package.expired', 'expired'],
      ['package.archived', 'archived'],
      ['package.unarchived', 'expired'],
    ]);
    expect(dataOf(got[0]!).payload.reason).toBe('deleted');
  });
});

describe('types', () => {
  it('?types= keeps only those types; an unknown type answers 400', async () => {
    const pkg = await createPackage(svc, owner);
    const s = await stream(`/v1/packages/${pkg.id}`, pkg.h, 'types=package.finalized,package.expired');
    await register(svc, pkg, { kind: 'directory', name: 'dir' });
    await finalizePackage(svc, pkg);
    expect((await next(s)).event).toBe('package.finalized');
    const bad = await stream(`/v1/teams/${owner.teamId}`, owner.h, 'types=package.finalized,package.exploded');
    expect(bad.status).toBe(400);
  });
});

describe('replay', () => {
  it('Last-Event-ID (header or query) replays what came after it, then goes on live', async () => {
    const pkg = await createPackage(svc, owner);
    const live = await pkgStream(pkg);
    await register(svc, pkg, { name: 'one.txt', size: 1 });
    await register(svc, pkg, { name: 'two.txt', size: 1 });
    const first = await until(live, (m) => dataOf(m).payload.name === 'two.txt');
    expect(first).toHaveLength(2);
    const afterOne = first[0]!.id!;

    const byHeader = await pkgStream(pkg, { ...pkg.h, 'last-event-id': afterOne });
    const replayed = await next(byHeader);
    expect(replayed).toEqual(first[1]);
    const byQuery = await stream(`/v1/packages/${pkg.id}`, pkg.h, `last_event_id=${afterOne}`);
    expect(await next(byQuery)).toEqual(first[1]);
    // And live after the replay.
    await register(svc, pkg, { name: 'three.txt', size: 1 });
    for (const s of [byHeader, byQuery]) expect(dataOf(await next(s)).payload.name).toBe('three.txt');
  });

  it('without Last-Event-ID a stream starts with what is raised from then on', async () => {
    const pkg = await createPackage(svc, owner);
    await register(svc, pkg, { name: 'before.txt', size: 1 });
    const s = await pkgStream(pkg);
    await register(svc, pkg, { name: 'after.txt', size: 1 });
    expect(dataOf(await next(s)).payload.name).toBe('after.txt');
  });

  it('an id this service never gave, or one whose successors were swept, answers `reset` with the id to resume from', async () => {
    const pkg = await createPackage(svc, owner);
    const newest = Number((await svc.ctx.db.selectFrom('events').select((eb) => eb.fn.max('id').as('n')).executeTakeFirstOrThrow()).n);
    const future = await pkgStream(pkg, { ...pkg.h, 'last-event-id': String(newest + 1000) });
    const reset = await next(future);
    expect(reset.event).toBe('reset');
    expect(dataOf(reset)).toEqual({ reason: 'replay_unavailable', last_event_id: Number(reset.id) });
    expect(Number(reset.id)).toBeGreaterThanOrEqual(newest);
    // Live after the reset.
    await register(svc, pkg, { name: 'x.txt', size: 1 });
    expect((await next(future)).event).toBe('file.registered');
  });
});

describe('retention', () => {
  it('events older than a day are swept, but never the newest; a replay from before the oldest kept is a reset', async () => {
    const old = new Date(Date.now() - EVENT_RETENTION_MS - 60_000).toISOString();
    const pkg = await createPackage(svc, owner);
    const firstId = Number((await svc.ctx.db.selectFrom('events').select((eb) => eb.fn.min('id').as('n')).executeTakeFirstOrThrow()).n);
    // Age every event so far, then one more event that is new.
    await svc.ctx.db.updateTable('events').set({ created_at: old }).execute();
    await register(svc, pkg, { name: 'kept.txt', size: 1 });
    const swept = await sweepEvents(svc.ctx);
    expect(swept).toBeGreaterThan(0);
    const left = await svc.ctx.db.selectFrom('events').select(['id', 'created_at']).execute();
    expect(left.every((e) => e.created_at > old)).toBe(true);
    const s = await pkgStream(pkg, { ...pkg.h, 'last-event-id': String(firstId) });
    expect((await next(s)).event).toBe('reset');

    // With nothing new, the newest is kept even when old: ids stay known.
    await svc.ctx.db.updateTable('events').set({ created_at: old }).execute();
    await sweepEvents(svc.ctx);
    expect(await svc.ctx.db.selectFrom('events').select('id').execute()).toHaveLength(1);
  });
});

describe('the Team stream', () => {
  it("carries the Team's Packages, its Portals' included, and never a Package of another Team", async () => {
    const s = await teamStream(member);
    const before = Number((await svc.ctx.db.selectFrom('events').select((eb) => eb.fn.max('id').as('n')).executeTakeFirstOrThrow()).n);
    const foreign = await createPackage(svc, stranger);
    await finalizePackage(svc, foreign);
    const portal = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/portals`, { headers: owner.h, body: { name: 'Inbox', subdomain: 'events-inbox', active: true } });
    expect(portal.status, JSON.stringify(portal.body)).toBe(201);
    const created = await call(svc.url, 'POST', `/v1/portals/${portal.body.id}/packages`, { body: { name: 'Rushes', description: '', sender: 'someone@example.com' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pp: Pkg = { id: created.body.id, token: created.body.access_token, h: { 'x-package-token': created.body.access_token }, body: created.body };
    await finalizePackage(svc, pp);
    const got = await until(s, (m) => m.event === 'package.finalized' && dataOf(m).package_id === pp.id);
    expect(got.map((m) => m.event)).toEqual(['package.created', 'package.finalized']);
    for (const m of got) expect(dataOf(m)).toMatchObject({ team_id: owner.teamId, package_id: pp.id, portal_id: portal.body.id });
    expect(got.some((m) => dataOf(m).package_id === foreign.id)).toBe(false);
    // The stranger's own stream has theirs.
    const theirs = await teamStream(stranger, { ...stranger.h, 'last-event-id': String(before) });
    const replay = await until(theirs, (m) => m.event === 'package.finalized' && dataOf(m).package_id === foreign.id);
    expect(replay.map((m) => m.event)).toEqual(['package.created', 'package.finalized']);
    expect(replay.every((m) => dataOf(m).team_id === stranger.teamId)).toBe(true);
  });
});

describe("the Team stream follows the rule of Package reads", () => {
  it("a member does not hear of a Package of a Teamspace they are not in; its Owner does, and so do the Teamspace's members", async () => {
    const inside = await newActor(svc, 'events-inside@example.com', { teamId: owner.teamId, role: 'member' });
    const membership = (a: Actor) => svc.ctx.db.selectFrom('memberships').select('id').where('user_id', '=', a.userId).where('team_id', '=', owner.teamId).executeTakeFirstOrThrow();
    const space = await call(svc.url, 'POST', `/v1/teams/${owner.teamId}/spaces`, { headers: owner.h, body: { name: 'Finance', membership_ids: [(await membership(inside)).id] } });
    expect(space.status, JSON.stringify(space.body)).toBe(201);
    const [own, outsider, insider] = [await teamStream(owner), await teamStream(member), await teamStream(inside)];
    const hidden = await createPackage(svc, owner, { name: 'books', teamspace_id: space.body.id });
    const open = await createPackage(svc, owner, { name: 'for all' });
    const isOpen = (m: SseMessage) => dataOf(m).package_id === open.id;
    const heard = async (s: EventStream) => (await until(s, isOpen)).map((m) => dataOf(m).package_id);
    expect(await heard(own)).toEqual([hidden.id, open.id]);
    expect(await heard(insider)).toEqual([hidden.id, open.id]);
    expect(await heard(outsider)).toEqual([open.id]);
    // The Package's own stream answers that member 404, as every read of it does.
    expect((await pkgStream(hidden, member.h)).status).toBe(404);
  });
});

describe('shutdown', () => {
  it("a stopping service ends its streams and stops without waiting for them", async () => {
    const other = await startTestService();
    try {
      const who = await newActor(other, 'events-shutdown@example.com');
      const s = await openEventStream(`${other.url}/v1/teams/${who.teamId}`, { headers: who.h });
      expect(s.status).toBe(200);
      await other.stop();
      // Ended by the server, properly (not cut).
      expect(await s.ended).toBe(true);
    } finally {
      await other.close().catch(() => undefined);
    }
  });
});
