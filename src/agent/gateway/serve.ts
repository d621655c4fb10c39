// Files of a gateway's root sent to the service as a Package (cloud_to_svc):
// the service asks for a listing of what it wants, then for each part of each
// file it hands a part blueprint of its store; the gateway reads that range and
// PUTs it with the agent's upload machinery (engine/partUpload.ts: streamed,
// MD5 checked against the ETag, a file changed since it was listed refused),
// and answers the ETag. Nothing outside the root is read: paths are checked
// segment by segment, and symbolic links are neither followed nor listed.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AgentDb } from '../store/db.js';
import type { OpArgs, OpValue } from '../../api/hosted/storageGateway.js';
import * as store from '../store/gatewayStore.js';
import type { GatewayRow } from '../store/gatewayStore.js';
import { remoteNameProblem, remotePathProblem } from '../engine/safePath.js';
import { isClutter } from '../engine/walk.js';
import type { ObjectHttp } from '../engine/objectHttp.js';
import { sendPart } from '../engine/partUpload.js';
import { backoffMs, sleep, type EngineTuning } from '../engine/retry.js';
import { GatewayFailure } from './link.js';

/** The most files one listing holds (as many as the service takes in one transfer). */
export const MAX_LISTED = 10_000;

export interface ServeDeps {
  db: AgentDb;
  log: Logger;
  objects: ObjectHttp;
  tuning: EngineTuning;
  changed(gatewayId: string, kind: 'state' | 'progress'): void;
}

type Listed = OpValue<'collect.list'>['files'][number];

function requireReadable(g: GatewayRow): void {
  if (g.permissions !== 'r') throw new GatewayFailure('permission_denied', `the gateway "${g.name}" is registered write-only (permissions w): it receives deliveries and serves no files`);
}

/** A path the service named, as segments below the root; unsafe_path when it could lead anywhere else. */
function segmentsOf(rel: string): string[] {
  const trimmed = rel.replace(/\/+$/, '');
  const problem = remotePathProblem(trimmed);
  if (problem) throw new GatewayFailure('unsafe_path', `"${rel}" ${problem}: the gateway serves only what is under its root`);
  const segs = trimmed.split('/').filter((s) => s !== '' && s !== '.');
  for (const s of segs) {
    const p = remoteNameProblem(s);
    if (p) throw new GatewayFailure('unsafe_path', `"${rel}": the name "${s}" ${p}`);
  }
  return segs;
}

/**
 * Walks root/segs one level at a time without following a link: each level must
 * be a real folder, the last one a folder or a regular file. Answers its path and stats.
 */
async function locate(root: string, segs: string[], rel: string): Promise<{ local: string; st: import('node:fs').Stats }> {
  let local = path.resolve(root);
  let st = await fs.stat(local).catch(() => undefined);
  if (!st?.isDirectory()) throw new GatewayFailure('failed', `the gateway's root ${root} is not there (a volume not mounted?)`);
  for (const [i, s] of segs.entries()) {
    local = path.join(local, s);
    st = await fs.lstat(local).catch(() => undefined);
    if (!st) throw new GatewayFailure('not_found', `"${rel}" is not under the gateway's root`);
    if (st.isSymbolicLink()) throw new GatewayFailure('unsafe_path', `"${segs.slice(0, i + 1).join('/')}" is a symbolic link: the gateway does not follow links`);
    if (i < segs.length - 1 && !st.isDirectory()) throw new GatewayFailure('not_found', `"${rel}" is not under the gateway's root`);
  }
  return { local, st: st! };
}

export class Server {
  constructor(private readonly d: ServeDeps) {}

  private transferOf(g: GatewayRow, transferId: string): store.TransferRow {
    const t = store.getTransfer(this.d.db, transferId);
    if (!t || t.gateway_id !== g.id || t.direction !== 'cloud_to_svc') throw new GatewayFailure('bad_request', `no collection ${transferId} began on this gateway (collect.list first)`);
    return t;
  }

  async list(g: GatewayRow, a: OpArgs<'collect.list'>, signal: AbortSignal): Promise<OpValue<'collect.list'>> {
    requireReadable(g);
    const known = store.getTransfer(this.d.db, a.transfer_id);
    if (known && known.gateway_id !== g.id) throw new GatewayFailure('bad_request', `transfer ${a.transfer_id} belongs to another gateway`);
    const root = known?.root_path ?? g.root_path;
    const found = new Map<string, Listed>();
    const add = (rel: string, st: { size: number; mtimeMs: number }) => {
      found.set(rel, { path: rel, size: st.size, mtime_ms: Math.floor(st.mtimeMs) });
      if (found.size > MAX_LISTED) throw new GatewayFailure('too_many_files', `more than ${MAX_LISTED} files under ${a.refs.join(', ')}; ask for fewer`);
    };
    const walk = async (dir: string, rel: string): Promise<void> => {
      signal.throwIfAborted();
      const entries = await fs.readdir(dir, { withFileTypes: true });
      for (const e of entries.sort((x, y) => (x.name < y.name ? -1 : 1))) {
        if (isClutter(e.name) || remoteNameProblem(e.name)) continue;
        const childRel = rel ? `${rel}/${e.name}` : e.name;
        const child = path.join(dir, e.name);
        // Links are left out: one could lead anywhere on the machine.
        if (e.isDirectory()) await walk(child, childRel);
        else if (e.isFile()) {
          const st = await fs.lstat(child).catch(() => undefined);
          if (st?.isFile()) add(childRel, st);
        }
      }
    };
    for (const ref of a.refs) {
      const segs = segmentsOf(ref);
      const { local, st } = await locate(root, segs, ref);
      const rel = segs.join('/');
      if (st.isDirectory()) await walk(local, rel);
      else if (st.isFile()) add(rel, st);
      else throw new GatewayFailure('not_found', `"${ref}" is neither a file nor a folder`);
    }
    const files = [...found.values()];
    store.beginTransfer(this.d.db, {
      transfer_id: a.transfer_id,
      gateway_id: g.id,
      direction: 'cloud_to_svc',
      package_id: a.package_id,
      package_name: a.package_name,
      root_path: root,
      folder: null,
      files_total: files.length,
      bytes_total: files.reduce((n, f) => n + f.size, 0),
    });
    this.d.changed(g.id, 'state');
    return { files };
  }

  async part(g: GatewayRow, a: OpArgs<'collect.part'>, signal: AbortSignal): Promise<OpValue<'collect.part'>> {
    requireReadable(g);
    const t = this.transferOf(g, a.transfer_id);
    const { local, st } = await locate(t.root_path, segmentsOf(a.path), a.path);
    if (!st.isFile() || st.size !== a.size || Math.floor(st.mtimeMs) !== a.mtime_ms) {
      throw new GatewayFailure('file_changed', `"${a.path}" changed since it was listed (now ${st.size} bytes); start a new transfer`);
    }
    if (a.offset + a.length > a.size) throw new GatewayFailure('bad_request', `bytes ${a.offset}+${a.length} lie past the end of "${a.path}"`);
    const file = { local_path: local, size: st.size, mtime_ms: st.mtimeMs };
    const { retry } = this.d.tuning;
    for (let attempt = 1; ; attempt++) {
      const out = await sendPart(this.d.objects, a.blueprint, file, { start: a.offset, length: a.length }, signal);
      switch (out.kind) {
        case 'stored': {
          const row = store.fileRow(this.d.db, t.transfer_id, a.seq, a.path, a.size);
          const bytes = Math.min(a.size, row.bytes_done + a.length);
          store.setFile(this.d.db, t.transfer_id, a.seq, { bytes_done: bytes, ...(bytes >= a.size ? { state: 'complete' } : {}) });
          this.d.changed(g.id, bytes >= a.size ? 'state' : 'progress');
          return { etag: out.etag };
        }
        case 'expired':
          throw new GatewayFailure('url_expired', 'the part blueprint expired');
        case 'upload_gone':
          throw new GatewayFailure('failed', `the store no longer has the upload of "${a.path}"`);
        case 'aborted':
          throw signal.reason ?? new Error('aborted');
        case 'fatal':
          throw new GatewayFailure('file_changed', out.error.message);
        case 'retry':
          if (attempt >= retry.attempts) throw new GatewayFailure('failed', `sending a part of "${a.path}" failed ${attempt} times: ${out.reason}`);
          await sleep(backoffMs(attempt, retry), signal);
      }
    }
  }

  end(g: GatewayRow, a: OpArgs<'collect.end'>): OpValue<'collect.end'> {
    this.transferOf(g, a.transfer_id);
    store.endTransfer(this.d.db, a.transfer_id, a.ok, a.error ?? null);
    this.d.changed(g.id, 'state');
    return {};
  }
}
