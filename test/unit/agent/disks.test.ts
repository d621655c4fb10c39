// The disks registry: a path that does not exist yet counts by its nearest
// existing folder; a folder's disk is remembered; settings saved for a disk id
// come back in a new registry (the next start) and attach to the device found
// at that mount point, whatever its number then.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Disks, diskIdOf } from '../../../src/agent/engine/disks.js';
import { openAgentDb, type AgentDb } from '../../../src/agent/store/db.js';

const dirs: string[] = [];
const dbs: AgentDb[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.shut();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-disks-unit-'));
  dirs.push(d);
  return d;
}

describe('Disks', () => {
  it('finds the disk of a path not made yet by its nearest existing folder, and remembers a folder\'s', async () => {
    const root = tmp();
    const disks = new Disks();
    const e = (await disks.ofPath(path.join(root, 'not', 'yet', 'there')))!;
    expect(e).toBeDefined();
    expect(e.dev).toBe(fs.statSync(root).dev);
    expect(e.id).toBe(diskIdOf(e.mountPoint));
    expect(root === e.mountPoint || root.startsWith(e.mountPoint.endsWith(path.sep) ? e.mountPoint : e.mountPoint + path.sep)).toBe(true);
    // Met once, a folder answers at once (no promise), and its files run in its disk's gate.
    expect(await disks.ofFolder(root)).toBe(e);
    expect(disks.ofFolder(root)).toBe(e);
    expect(await disks.run('read', path.join(root, 'a.bin'), async () => e.gate.counts().readers)).toBe(1);
    expect(disks.all()).toEqual([e]);
  });

  it('keeps settings by disk id in agent.db: a new registry has them before the disk is met, and keeps them once it is', async () => {
    const dir = tmp();
    const db = openAgentDb(path.join(dir, 'agent.db'));
    dbs.push(db);
    const first = new Disks(db);
    const e = (await first.ofPath(dir))!;
    first.configure(e, { priority: 'prioritize_reads', max_concurrent_readers: 4, max_concurrent_writers: 1 });

    const next = new Disks(db);
    const saved = next.get(e.id)!;
    expect(saved).toMatchObject({ id: e.id, mountPoint: e.mountPoint, dev: undefined });
    expect(saved.gate.settings).toEqual({ priority: 'prioritize_reads', max_concurrent_readers: 4, max_concurrent_writers: 1 });
    const met = (await next.ofPath(dir))!;
    expect(met).toBe(saved);
    expect(met.dev).toBe(e.dev);
    expect(met.gate.settings.max_concurrent_readers).toBe(4);
  });
});
