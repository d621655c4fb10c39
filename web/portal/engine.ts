// The Portal page's upload: one Package through the Portal, each file registered
// with the service and sent straight to the store in parts through blueprints
// (four parts in flight), each part's ETag kept (resume.ts) so a reload sends
// only what is missing, each failure waited out or retried (api.ts), each file
// finalized once its parts are in, then the Package.
import type { Blueprint } from '../../src/api/hosted/blueprint.js';
import type { RegisterFileAnswer } from '../../src/api/hosted/files.js';
import { api, ApiError, putPart, retrying } from './api.js';
import { relOf, type Item } from './pick.js';
import { clear, load, sameFiles, save, type Saved, type SavedFile } from './resume.js';

const MiB = 1024 * 1024;
const PART = 8 * MiB;
const MAX_PARTS = 10_000;
const LANES = 4;
const BLUEPRINT_BATCH = 100;

/** Parts of 8 MiB, larger when a file would need more than 10,000. */
export const chunkFor = (size: number) => Math.max(PART, Math.ceil(size / MAX_PARTS / MiB) * MiB);

export interface FileState {
  sent: number;
  state: 'waiting' | 'sending' | 'done';
}

export interface UploadRequest {
  portalId: string;
  accessCode?: string;
  /** The Portal Package body (name, description, sender, and what the Portal asks: terms, form answers); made only for a new Package. */
  makeBody: () => Promise<Record<string, unknown> & { name: string; sender: string }>;
  items: Item[];
}

interface Run extends SavedFile {
  item: Item;
  parts: number;
  urls: Map<number, string>;
  fetching?: Promise<void>;
  opening?: Promise<void>;
  finishing?: Promise<void>;
  inflight: Map<number, number>;
}

export class PortalUpload {
  readonly files = new Map<Item, FileState>();
  /** Why the upload waits (a lost connection), with when it tries again; undefined while it goes. */
  waiting: string | undefined;
  /** Whether this run carries on an upload saved before a reload. */
  resumed = false;
  packageId: string | undefined;
  private saved!: Saved;
  private runs: Run[] = [];
  private readonly abort = new AbortController();

  constructor(private readonly req: UploadRequest, private readonly changed: () => void) {
    for (const i of req.items) this.files.set(i, { sent: 0, state: 'waiting' });
  }

  get total(): number {
    return this.req.items.reduce((n, i) => n + i.file.size, 0);
  }

  get sent(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.sent;
    return n;
  }

  stop(): void {
    this.abort.abort();
  }

  private retry<T>(fn: () => Promise<T>): Promise<T> {
    return retrying(fn, (seconds, err) => {
      this.waiting = seconds === undefined ? undefined : `${err.status === 0 ? 'Connection lost' : `The server is busy (${err.status})`}. Trying again in ${seconds} s…`;
      this.changed();
    }, this.abort.signal);
  }

  private get auth() {
    return { 'x-package-token': this.saved.token };
  }

  private persist(): void {
    for (const r of this.runs) {
      this.saved.files[relOf(r.item)] = { size: r.size, lastModified: r.lastModified, chunk: r.chunk, fileId: r.fileId, uploadId: r.uploadId, etags: r.etags, done: r.done };
    }
    save(this.req.portalId, this.saved);
  }

  async run(): Promise<string> {
    await this.openPackage();
    this.runs = this.req.items.map((item) => {
      const s = this.saved.files[relOf(item)];
      const chunk = s?.chunk ?? chunkFor(item.file.size);
      const r: Run = {
        item, size: item.file.size, lastModified: item.file.lastModified, chunk,
        fileId: s?.fileId, uploadId: s?.uploadId, etags: s?.etags ?? [], done: s?.done ?? false,
        parts: Math.ceil(item.file.size / chunk), urls: new Map(), inflight: new Map(),
      };
      this.report(r);
      return r;
    });
    this.persist();
    // A second round only when a file had to start over (its saved upload was gone) during the first.
    for (let round = 0; round < 3 && this.runs.some((r) => !r.done); round++) {
      const tasks = this.tasks();
      await Promise.all(Array.from({ length: LANES }, async () => {
        for (let t = tasks.next(); !t.done; t = tasks.next()) await this.task(t.value.r, t.value.part);
      }));
    }
    const left = this.runs.find((r) => !r.done);
    if (left) throw new ApiError(500, 'incomplete', `${relOf(left.item)} could not be completed. Send again to carry on.`);
    await this.retry(() => api<void>('POST', `/v1/packages/${this.saved.packageId}/finalize`, undefined, this.auth));
    clear(this.req.portalId);
    return this.saved.packageId;
  }

  /** The saved Package when these are its files and it is still open; else a new one. */
  private async openPackage(): Promise<void> {
    const old = load(this.req.portalId);
    if (old && sameFiles(old, this.req.items)) {
      // A Portal uploader's token reads only the Package's own state: still new, the token still good (a refusal: a new Package).
      try {
        const pkg = await this.retry(() => api<{ state: string }>('GET', `/v1/packages/${old.packageId}`, undefined, { 'x-package-token': old.token }));
        if (pkg.state === 'new') {
          this.saved = old;
          this.packageId = old.packageId;
          this.resumed = true;
          return;
        }
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
      }
    }
    const headers: Record<string, string> = this.req.accessCode ? { 'x-access-code': encodeURIComponent(this.req.accessCode) } : {};
    const body = await this.req.makeBody();
    const pkg = await this.retry(() => api<{ id: string; access_token: string }>('POST', `/v1/portals/${this.req.portalId}/packages`, body, headers));
    this.saved = { v: 1, packageId: pkg.id, token: pkg.access_token, sender: body.sender, name: body.name, files: {} };
    this.packageId = pkg.id;
  }

  /** Every part still to send, file after file; a file with none left (empty, or all sent before a reload) is its finalize (part 0). */
  private *tasks(): Generator<{ r: Run; part: number }> {
    for (const r of this.runs) {
      if (r.done) continue;
      const have = new Set(r.etags.map(([n]) => n));
      const missing = [];
      for (let n = 1; n <= r.parts; n++) if (!have.has(n)) missing.push(n);
      if (missing.length === 0) yield { r, part: 0 };
      for (const n of missing) yield { r, part: n };
    }
  }

  private report(r: Run): void {
    let sent = 0;
    for (const [n] of r.etags) sent += this.partSize(r, n);
    for (const loaded of r.inflight.values()) sent += loaded;
    this.files.set(r.item, { sent: r.done ? r.size : sent, state: r.done ? 'done' : sent > 0 || r.inflight.size > 0 ? 'sending' : 'waiting' });
    this.changed();
  }

  private partSize(r: Run, n: number): number {
    return Math.min(r.chunk, r.size - (n - 1) * r.chunk);
  }

  private async task(r: Run, part: number): Promise<void> {
    if (part > 0) await this.sendPart(r, part);
    if (r.etags.length === r.parts && !r.done) await (r.finishing ??= this.finish(r).finally(() => (r.finishing = undefined)));
  }

  /** Registers the file (again, when its saved upload is gone: the service replaces a pending entry). */
  private register(r: Run): Promise<void> {
    const single = r.parts === 1;
    const q = single ? '?single=true' : `?count=${Math.min(BLUEPRINT_BATCH, Math.max(1, r.parts))}`;
    return this.retry(async () => {
      const a = await api<RegisterFileAnswer>('POST', `/v1/packages/${this.saved.packageId}/files${q}`, {
        kind: 'file', name: r.item.name, path: r.item.path, last_modified: new Date(r.lastModified || Date.now()).toISOString(), size: r.size, chunk_size: r.chunk,
      }, this.auth);
      r.fileId = a.file.id;
      r.uploadId = a.upload_id;
      // Each part URL takes exactly its part of the registered size at the service's chunk size.
      r.chunk = a.file.chunk_size;
      r.parts = Math.ceil(r.size / r.chunk);
      r.etags = [];
      r.urls = new Map((a.upload_blueprints ?? []).map((b: Blueprint, i: number) => [i + 1, b.url]));
      this.persist();
      this.report(r);
    });
  }

  private async open(r: Run): Promise<void> {
    if (r.fileId && r.uploadId) return;
    await (r.opening ??= this.register(r).finally(() => (r.opening = undefined)));
  }

  /** The blueprint of part n, asked for in batches; a saved upload that is gone is registered anew. */
  private async urlOf(r: Run, n: number): Promise<string> {
    for (let tries = 0; tries < 3; tries++) {
      await this.open(r);
      const url = r.urls.get(n);
      if (url) return url;
      if (!r.fetching) {
        const uploadId = r.uploadId!;
        r.fetching = this.retry(() => api<Blueprint[]>('POST', `/v1/packages/${this.saved.packageId}/files/${r.fileId}?start=${n - 1}&count=${Math.min(BLUEPRINT_BATCH, r.parts - n + 1)}`, { upload_id: uploadId }, this.auth))
          .then((list) => list.forEach((b, i) => r.urls.set(n + i, b.url)))
          .catch((err: unknown) => {
            // The file or its upload is gone (a long pause, a replaced entry): start the file over.
            if (err instanceof ApiError && (err.status === 404 || err.status === 409)) {
              r.fileId = undefined;
              r.uploadId = undefined;
              return;
            }
            throw err;
          })
          .finally(() => (r.fetching = undefined));
      }
      await r.fetching;
    }
    throw new ApiError(500, 'no_blueprint', `The server gave no upload address for part ${n} of ${relOf(r.item)}.`);
  }

  private async sendPart(r: Run, n: number): Promise<void> {
    const start = (n - 1) * r.chunk;
    const blob = r.item.file.slice(start, start + this.partSize(r, n));
    let refused = 0;
    const etag = await this.retry(async () => {
      const url = await this.urlOf(r, n);
      try {
        return await putPart(url, blob, (loaded) => {
          r.inflight.set(n, loaded);
          this.report(r);
        }, this.abort.signal);
      } catch (err) {
        r.inflight.delete(n);
        // A refused signature is an expired blueprint (a long pause): ask for a new one, twice at most.
        if (err instanceof ApiError && err.status === 403 && refused++ < 2) {
          r.urls.delete(n);
          throw new ApiError(503, 'expired', 'The upload address expired.', 0);
        }
        throw err;
      }
    });
    r.inflight.delete(n);
    r.etags.push([n, etag]);
    this.persist();
    this.report(r);
  }

  private async finish(r: Run): Promise<void> {
    await this.open(r);
    await this.retry(() =>
      api('POST', `/v1/packages/${this.saved.packageId}/files/${r.fileId}/finalize`, {
        chunk_extras: [...r.etags].sort((a, b) => a[0] - b[0]).map(([part_number, etag]) => ({ part_number, etag })),
        file_extras: { upload_id: r.uploadId },
        size: r.size,
        chunk_size: r.chunk,
      }, this.auth),
    );
    r.done = true;
    this.persist();
    this.report(r);
  }
}
