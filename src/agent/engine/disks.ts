// The disks the agent reads and writes, each with its gate (diskGate.ts). A file
// is matched to its disk by its device (st_dev); a device to its disk id by its
// mount point (mounts.ts), hashed: device numbers may differ from one start to
// the next (a USB disk plugged in again), mount points stay. Settings are kept
// in agent.db (store/diskStore.ts) and apply at once to the gates.
//
// The engine asks for a file's gate by its path: its folder's device is
// remembered, so a file costs a map lookup (a new folder, one stat off the
// event loop).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentDb } from '../store/db.js';
import { listDiskSettings, saveDiskSettings } from '../store/diskStore.js';
import { DiskGate, NO_LIMITS, type DiskLimits, type DiskOp } from './diskGate.js';
import { mountOf, type Mount } from './mounts.js';

export interface DiskEntry extends Mount {
  id: string;
  /** The device number seen in this run; undefined for a disk with saved settings not seen yet. */
  dev: number | undefined;
  gate: DiskGate;
}

/** Folders whose device is remembered; the map starts over when full. */
const DIR_CACHE = 4096;

export const diskIdOf = (mountPoint: string): string => createHash('sha256').update(mountPoint).digest('hex').slice(0, 16);

export class Disks {
  private readonly byDev = new Map<number, DiskEntry>();
  private readonly byId = new Map<string, DiskEntry>();
  private readonly dirs = new Map<string, DiskEntry>();

  constructor(private readonly db?: AgentDb) {
    for (const row of db ? listDiskSettings(db) : []) {
      const { disk_id: id, mount_point: mountPoint, ...limits } = row;
      this.byId.set(id, { id, mountPoint, device: null, fsType: null, dev: undefined, gate: new DiskGate(pick(limits)) });
    }
  }

  /** Every disk seen in this run or with saved settings. */
  all(): DiskEntry[] {
    return [...this.byId.values()].sort((a, b) => a.mountPoint.localeCompare(b.mountPoint));
  }

  get(id: string): DiskEntry | undefined {
    return this.byId.get(id);
  }

  configure(entry: DiskEntry, limits: DiskLimits): void {
    entry.gate.configure(limits);
    if (this.db) saveDiskSettings(this.db, { disk_id: entry.id, mount_point: entry.mountPoint, ...pick(limits) });
  }

  /**
   * The disk of `p`, or of its nearest existing folder (a download's destination
   * may not exist yet); undefined if none can be read. The stat goes through
   * libuv's threads: a network mount that hangs holds this lookup, not the agent.
   */
  async ofPath(p: string): Promise<DiskEntry | undefined> {
    let at = path.resolve(p);
    for (let i = 0; i < 4096; i++) {
      const st = await fs.promises.stat(at).catch(() => undefined);
      if (st) return this.ofDev(st.dev, at);
      const up = path.dirname(at);
      if (up === at) return undefined;
      at = up;
    }
    return undefined;
  }

  /** The disk of folder `dir`, remembered: a folder met before answers at once. */
  ofFolder(dir: string): DiskEntry | Promise<DiskEntry | undefined> {
    const known = this.dirs.get(dir);
    if (known) return known;
    return this.ofPath(dir).then((e) => {
      if (e) {
        if (this.dirs.size >= DIR_CACHE) this.dirs.clear();
        this.dirs.set(dir, e);
      }
      return e;
    });
  }

  /** The gate of folder `dir`'s disk. */
  async gateOf(dir: string): Promise<DiskGate | undefined> {
    return (await this.ofFolder(dir))?.gate;
  }

  /** Runs one read or write of the file `p` in a slot of its disk; as is when its disk cannot be told. */
  run<T>(op: DiskOp, p: string, fn: () => Promise<T>): Promise<T> {
    return this.runInFolder(op, path.dirname(p), fn);
  }

  /** As run(), for an operation on folder `dir` itself (a listing). */
  runInFolder<T>(op: DiskOp, dir: string, fn: () => Promise<T>): Promise<T> {
    const e = this.ofFolder(dir);
    // A folder met before: no await more than the gate's own.
    if (!(e instanceof Promise)) return e.gate.run(op, fn);
    return e.then((found) => (found ? found.gate.run(op, fn) : fn()));
  }

  private ofDev(dev: number, p: string): DiskEntry {
    const known = this.byDev.get(dev);
    if (known) return known;
    const mount = mountOf(p, dev);
    const id = diskIdOf(mount.mountPoint);
    // Settings saved in an earlier run (its device number then may have been another).
    const saved = this.byId.get(id);
    const e: DiskEntry = saved ? Object.assign(saved, mount, { dev }) : { id, ...mount, dev, gate: new DiskGate(NO_LIMITS) };
    this.byDev.set(dev, e);
    this.byId.set(id, e);
    return e;
  }
}

const pick = (l: DiskLimits): DiskLimits => ({ priority: l.priority, max_concurrent_readers: l.max_concurrent_readers, max_concurrent_writers: l.max_concurrent_writers });
