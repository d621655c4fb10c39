// Deliveries into a gateway's root (svc_to_cloud): each file the service names
// is fetched from the pre-signed URL it gives, in ranges (the download engine's
// fetchRange), into a `.ferrypart` beside its final place, each range flushed
// and recorded before the next; then checked, given its owner, and renamed into
// place without replacing anything (downloadFiles.ts). Paths come from the
// service and are never trusted: each is checked segment by segment
// (safePath.ts), folders are made one level at a time and never through a
// symlink, and a path that would leave the root is refused with nothing
// written. A file recorded complete is acknowledged again at once; a partial
// one resumes from its recorded bytes.
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AgentDb } from '../store/db.js';
import type { OpArgs, OpValue } from '../../api/hosted/storageGateway.js';
import * as store from '../store/gatewayStore.js';
import type { GatewayRow } from '../store/gatewayStore.js';
import { entrySegments, remotePathProblem, UnsafePathError } from '../engine/safePath.js';
import { applyOwner, ensureDirs, exists, md5File, partPathOf, plainMd5, publishPart, reopenPart, reservePart, type Owner } from '../engine/downloadFiles.js';
import { fetchRange, RangeHttpError, RangeMismatchError, type RangeTransport } from '../engine/rangeFetch.js';
import { backoffMs, describe, failureKind, isAbort, sleep, type EngineTuning } from '../engine/retry.js';
import { GatewayFailure } from './link.js';

/** Bytes fetched per ranged GET; each range is flushed and recorded before the next. */
export const GATEWAY_RANGE = 8 * 1024 * 1024;
/** Progress notes to the service, at most this often per file. */
const PROGRESS_EVERY_MS = 500;

export interface ReceiveDeps {
  db: AgentDb;
  log: Logger;
  transport: RangeTransport;
  tuning: EngineTuning;
  /** The gateway's record changed (a transfer began, a file landed, it ended). */
  changed(gatewayId: string, kind: 'state' | 'progress'): void;
}

type Progress = (p: { transfer_id: string; seq: number; bytes: number }) => void;

const ownerOf = (g: GatewayRow): Owner => ({ uid: g.user_id, gid: g.group_id });

function requireWritable(g: GatewayRow): void {
  if (g.permissions !== 'w') throw new GatewayFailure('permission_denied', `the gateway "${g.name}" is registered read-only (permissions r): it serves files and receives no deliveries`);
}

function transferOf(db: AgentDb, g: GatewayRow, transferId: string): store.TransferRow {
  const t = store.getTransfer(db, transferId);
  if (!t || t.gateway_id !== g.id || t.direction !== 'svc_to_cloud') throw new GatewayFailure('bad_request', `no delivery ${transferId} began on this gateway (deliver.begin first)`);
  return t;
}

/** The local segments of a path the service named, or unsafe_path saying why it is refused. */
function segmentsOf(rel: string): string[] {
  const i = rel.lastIndexOf('/');
  try {
    return entrySegments(i < 0 ? '' : rel.slice(0, i), rel.slice(i + 1));
  } catch (err) {
    if (err instanceof UnsafePathError) throw new GatewayFailure('unsafe_path', `"${rel}" is refused: ${err.message}; nothing was written`);
    throw err;
  }
}

export class Receiver {
  /** One request per file at a time: a resent request waits for the one a dropped socket left winding down. */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(private readonly d: ReceiveDeps) {}

  /** Resolves once no file is being written (those a closed socket aborted have wound down). */
  async idle(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy.values()]);
  }

  begin(g: GatewayRow, a: OpArgs<'deliver.begin'>): OpValue<'deliver.begin'> {
    requireWritable(g);
    const known = store.getTransfer(this.d.db, a.transfer_id);
    if (known && known.gateway_id !== g.id) throw new GatewayFailure('bad_request', `transfer ${a.transfer_id} belongs to another gateway`);
    store.beginTransfer(this.d.db, {
      transfer_id: a.transfer_id,
      gateway_id: g.id,
      direction: 'svc_to_cloud',
      package_id: a.package_id,
      package_name: a.package_name,
      // A delivery keeps the root it began with, even if the gateway's root_path is updated meanwhile.
      root_path: known?.root_path ?? g.root_path,
      folder: remotePathProblem(a.folder) ? null : a.folder,
      files_total: a.files_total,
      bytes_total: a.bytes_total,
    });
    this.d.changed(g.id, 'state');
    return {};
  }

  end(g: GatewayRow, a: OpArgs<'deliver.end'>): OpValue<'deliver.end'> {
    transferOf(this.d.db, g, a.transfer_id);
    store.endTransfer(this.d.db, a.transfer_id, a.ok, a.error ?? null);
    this.d.changed(g.id, 'state');
    return {};
  }

  async file(g: GatewayRow, a: OpArgs<'deliver.file'>, signal: AbortSignal, progress: Progress): Promise<OpValue<'deliver.file'>> {
    requireWritable(g);
    const t = transferOf(this.d.db, g, a.transfer_id);
    const key = `${a.transfer_id}:${a.seq}`;
    const before = this.busy.get(key) ?? Promise.resolve();
    const run: Promise<OpValue<'deliver.file'>> = before
      .catch(() => undefined)
      .then(() => this.write(g, t, a, signal, progress))
      .finally(() => {
        if (this.busy.get(key) === run) this.busy.delete(key);
      });
    this.busy.set(key, run);
    return run;
  }

  private async write(g: GatewayRow, t: store.TransferRow, a: OpArgs<'deliver.file'>, signal: AbortSignal, progress: Progress): Promise<OpValue<'deliver.file'>> {
    const { db } = this.d;
    let row = store.fileRow(db, t.transfer_id, a.seq, a.path, a.size);
    let segs: string[];
    try {
      segs = segmentsOf(a.path);
    } catch (err) {
      store.setFile(db, t.transfer_id, a.seq, { state: 'refused', error: (err as Error).message });
      this.d.changed(g.id, 'state');
      this.d.log.warn({ gateway: g.id, transfer: t.transfer_id, path: a.path }, 'a delivered path was refused');
      throw err;
    }
    const name = segs[segs.length - 1]!;
    const root = t.root_path;
    const st = await fs.stat(root).catch(() => undefined);
    if (!st?.isDirectory()) throw new GatewayFailure('failed', `the gateway's root ${root} is not there (a volume not mounted?)`);
    let dir: string;
    try {
      dir = await ensureDirs(root, segs.slice(0, -1), { created: () => {}, checked: new Set(), owner: ownerOf(g) });
    } catch (err) {
      if (err instanceof UnsafePathError) {
        store.setFile(db, t.transfer_id, a.seq, { state: 'refused', error: err.message });
        this.d.changed(g.id, 'state');
        throw new GatewayFailure('unsafe_path', `"${a.path}" is refused: ${err.message}; nothing was written`);
      }
      throw new GatewayFailure('failed', `the folders of "${a.path}" cannot be made: ${describe(err)}`);
    }

    // Complete already (acknowledged before, or the answer was lost): said again, unless the file is gone.
    if (row.state === 'complete' && row.local_name && row.local_dir === dir) {
      const done = await fs.stat(path.join(dir, row.local_name)).catch(() => undefined);
      if (done?.isFile() && done.size === a.size) return { size: a.size };
    }
    if (row.state !== 'pending' || (row.local_dir !== null && row.local_dir !== dir)) {
      store.setFile(db, t.transfer_id, a.seq, { state: 'pending', error: null, local_dir: null, local_name: null, bytes_done: 0, etag: null });
      row = store.getFile(db, t.transfer_id, a.seq)!;
    }

    let fh: FileHandle | undefined;
    let done = row.bytes_done;
    let localName = row.local_name;
    try {
      if (!localName) {
        const r = await reservePart(dir, name, (n) => store.setFile(db, t.transfer_id, a.seq, { local_dir: dir, local_name: n, bytes_done: 0 }));
        fh = r.fh;
        localName = r.localName;
        done = 0;
      } else {
        fh = await reopenPart(partPathOf(dir, localName));
        if (!fh) {
          // Published just before a crash (the rename happened, its record did not): the file is in place.
          const final = path.join(dir, localName);
          const there = await fs.stat(final).catch(() => undefined);
          if (there?.isFile() && there.size === a.size && done >= a.size) return this.complete(g, t, a, localName);
          fh = await fs.open(partPathOf(dir, localName), 'w');
          done = 0;
          store.setFile(db, t.transfer_id, a.seq, { bytes_done: 0 });
        }
      }
      let etag = row.etag;
      let lastNote = 0;
      while (done < a.size) {
        const start = done;
        const end = Math.min(a.size, start + GATEWAY_RANGE) - 1;
        let inRange = 0;
        const got = await this.fetch(a.url, start, end, a.size, etag, fh, dir, signal, (n) => {
          inRange += n;
          const at = Date.now();
          if (at - lastNote >= PROGRESS_EVERY_MS) {
            lastNote = at;
            progress({ transfer_id: t.transfer_id, seq: a.seq, bytes: start + inRange });
          }
        });
        if (got && !etag) {
          etag = got;
          store.setFile(db, t.transfer_id, a.seq, { etag });
        }
        // On disk before it is recorded: a recorded range must survive power loss, not only a crash.
        await fh.datasync();
        done = end + 1;
        store.setFile(db, t.transfer_id, a.seq, { bytes_done: done });
        await db.synced();
        this.d.changed(g.id, 'progress');
      }
      // An earlier run may have written past what the file holds now.
      await fh.truncate(a.size);
      await fh.close();
      fh = undefined;
      const part = partPathOf(dir, localName);
      const md5 = plainMd5(etag);
      if (md5 && (await md5File(part, signal)) !== md5) {
        store.setFile(db, t.transfer_id, a.seq, { bytes_done: 0, etag: null });
        throw new GatewayFailure('failed', `"${a.path}": the MD5 of the written file differs from the store's ETag; it is fetched again`);
      }
      try {
        await applyOwner(part, ownerOf(g));
      } catch (err) {
        throw new GatewayFailure('failed', `"${a.path}" cannot be given to uid ${g.user_id ?? '-'} gid ${g.group_id ?? '-'}: ${describe(err)}`);
      }
      const modified = a.last_modified ? Date.parse(a.last_modified) : NaN;
      if (Number.isFinite(modified)) await fs.utimes(part, new Date(), new Date(modified)).catch(() => {});
      const used = await publishPart(dir, localName, name, (n) => store.setFile(db, t.transfer_id, a.seq, { local_name: n }));
      return this.complete(g, t, a, used);
    } finally {
      await fh?.close().catch(() => {});
    }
  }

  private async complete(g: GatewayRow, t: store.TransferRow, a: OpArgs<'deliver.file'>, localName: string): Promise<OpValue<'deliver.file'>> {
    store.setFile(this.d.db, t.transfer_id, a.seq, { state: 'complete', local_name: localName, bytes_done: a.size, error: null });
    await this.d.db.synced();
    this.d.changed(g.id, 'state');
    return { size: a.size };
  }

  /** One range, retried a few times for what a retry may fix; an expired URL is the service's to renew. */
  private async fetch(url: string, start: number, end: number, total: number, etag: string | null, fh: FileHandle, dir: string, signal: AbortSignal, onBytes: (n: number) => void): Promise<string | null> {
    const { retry } = this.d.tuning;
    const disk = await this.d.transport.disks?.gateOf(dir);
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetchRange({ url, start, end, total, etag, fh, signal, transport: this.d.transport, onBytes, disk });
      } catch (err) {
        if (signal.aborted || isAbort(err)) throw err;
        if (err instanceof RangeHttpError && err.status === 403) throw new GatewayFailure('url_expired', 'the URL expired');
        if (err instanceof RangeMismatchError) throw new GatewayFailure('failed', `the store's answer does not fit the file: ${err.message}`);
        if (failureKind(err) === 'permanent' && !(err instanceof RangeHttpError && err.status >= 500)) {
          throw new GatewayFailure('failed', `fetching bytes ${start}-${end} failed: ${describe(err)}`);
        }
        if (attempt >= retry.attempts) throw new GatewayFailure('failed', `fetching bytes ${start}-${end} failed ${attempt} times: ${describe(err)}`);
        await sleep(backoffMs(attempt, retry), signal);
      }
    }
  }
}

/** Removes the partial files of a gateway's unfinished deliveries (it is being unregistered). */
export async function removePartials(db: AgentDb, gatewayId: string): Promise<void> {
  for (const f of store.unfinishedFiles(db, gatewayId)) {
    if (!f.local_dir || !f.local_name) continue;
    const part = partPathOf(f.local_dir, f.local_name);
    if (await exists(part)) await fs.rm(part, { force: true }).catch(() => {});
  }
}
