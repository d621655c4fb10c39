// Two instances of the service on one PostgreSQL database: an event raised on
// one reaches a stream open on the other through LISTEN/NOTIFY. The streams'
// own look-again (the heartbeat) is set to ten minutes, so only the notice can
// bring it. On SQLite (one instance per database) there is nothing to test.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor, type Actor } from '../../helpers/auth.js';
import { createPackage } from '../../helpers/flow.js';
import { openEventStream, type EventStream } from '../../helpers/agent.js';
import { databaseForDataDir, onPostgres } from '../../helpers/postgres.js';
import { onlyIf, POSTGRES_ONLY } from '../../helpers/skip.js';

const QUIET = { 'events-heartbeat-ms': '600000' };

describe('event streams across instances', onlyIf(onPostgres(), POSTGRES_ONLY), () => {
  let a: TestService;
  let b: TestService;
  let owner: Actor;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    a = await startTestService(QUIET);
    b = await startTestService({ ...QUIET, database: (await databaseForDataDir(a.dataDir)).url });
    owner = await ownerActor(a);
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await b?.close();
    await a?.close();
  });

  it('a Package created on one instance is told at once to a Team stream open on the other', async () => {
    const s = await openEventStream(`${b.url}/v1/teams/${owner.teamId}`, { headers: owner.h, query: 'types=package.created' });
    streams.push(s);
    const pkg = await createPackage(a, owner, { name: 'Raised on A' });
    await vi.waitFor(() => expect(s.received.some((m) => m.event === 'package.created' && m.json?.package_id === pkg.id)).toBe(true), { timeout: 30_000, interval: 50 });
  });

  it('and the other way round, on a Package stream', async () => {
    const pkg = await createPackage(b, owner, { name: 'Raised on B' });
    const s = await openEventStream(`${a.url}/v1/packages/${pkg.id}`, { headers: owner.h, query: 'types=file.registered' });
    streams.push(s);
    const r = await fetch(`${b.url}/v1/packages/${pkg.id}/files`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-package-token': pkg.token },
      body: JSON.stringify({ kind: 'directory', name: 'told', path: '', last_modified: new Date().toISOString() }),
    });
    expect(r.status).toBe(201);
    await vi.waitFor(() => expect(s.received.some((m) => m.event === 'file.registered')).toBe(true), { timeout: 30_000, interval: 50 });
  });
});
