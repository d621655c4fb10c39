// A watch folder (team_upload, portal_upload): each subfolder of `path` is a
// unit, and so is each file at the top when `upload_loose_files` is on. chokidar
// reports every change below `path`; a unit is looked at once `timeout` passes
// with no change in it, and sent only if no file in it was written within the
// timeout either (size and modification time settled, no change event), so a
// file still being written is never sent early. What is sent of a unit is
// recorded (each file's path, size and modification time) before its upload is
// made; a file recorded is never sent again, so a restart sends nothing twice,
// and a unit that changes after it was sent is sent again with what is new or
// changed in it only. With `growing_files`, a unit that keeps changing is
// looked at every little while, and goes at once when a file being written in
// it holds a full part: that file is sent as it grows (engine/growingFile.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { CreateUploadBody, PortalUploadBody } from '../../api/agent/uploads.js';
import type { TeamUploadSettings, PortalUploadSettings } from '../../api/agent/automations.js';
import { isClutter, WalkError } from '../engine/walk.js';
import { newUploadId } from '../services/uploadCreate.js';
import { GrowingRefused, planOf } from '../engine/uploadPlan.js';
import { MIN_CHUNK_SIZE } from '../../api/agent/settings.js';
import { getUpload } from '../store/uploadStore.js';
import { deleteEntry, getEntry, insertEntry, retireUnit, sentKey, sentKeys, unitBusy, unitsWithSends, updateEntry } from '../store/automationStore.js';
import { blacklistMatcher, type PathMatcher } from './glob.js';
import { fingerprint, scanUnit, sentFileOf, type ScannedEntry } from './scan.js';
import { timeoutMs } from './timing.js';
import { isTransient, messageOf, type Runner, type RunnerHost, type RunnerSpec } from './runner.js';

interface Unit {
  name: string;
  /** When the last change in it was heard (or the watch began, or a retry is due: see retryLater). */
  lastEventAt: number;
  /** A change was heard since it was last looked at. */
  dirty: boolean;
  /** When it was last looked at for a file growing in it (growing_files). */
  lookedAt: number;
  /** Its send is under way: it is looked at again once that settles (kick), not by the timer. */
  waitsForSend: boolean;
}

/** A file's modification time this far in the future is the clock's doing, not a write: only events count for it. */
const FUTURE_SLACK_MS = 2_000;
/** stop() waits this long at most for a look under way (it may wait on the service). */
const STOP_WAIT_MS = 5_000;

export class WatchFolder implements Runner {
  private readonly root: string;
  private readonly timeout: number;
  private readonly blacklisted: PathMatcher;
  private readonly units = new Map<string, Unit>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Aborted by stop(): a watch still starting gives up waiting for chokidar. */
  private readonly halt = new AbortController();
  /** Looks at units one at a time. */
  private busy: Promise<void> = Promise.resolve();
  private opened: Promise<void> = Promise.resolve();
  /** The Portal wants every size up front (GrowingRefused): files go once complete, as without growing_files. */
  private growingRefused = false;

  constructor(
    private readonly host: RunnerHost,
    private readonly spec: RunnerSpec,
  ) {
    const f = spec.fields as TeamUploadSettings & PortalUploadSettings;
    this.root = path.resolve(f.path!);
    this.timeout = timeoutMs(f.timeout!);
    this.blacklisted = blacklistMatcher(f.blacklist);
  }

  private get fields() {
    return this.spec.fields as TeamUploadSettings & PortalUploadSettings;
  }

  /** How often the top of the folder is listed again, for units whose events were missed (network shares). */
  private get rescanMs() {
    return Math.min(60_000, Math.max(1_000, this.timeout));
  }

  start(): void {
    this.opened = this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halt.abort();
    clearTimeout(this.timer);
    clearTimeout(this.rescanTimer);
    await this.watcher?.close().catch(() => {});
    let t: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([this.opened.catch(() => {}), this.busy]), new Promise((r) => (t = setTimeout(r, STOP_WAIT_MS)))]);
    clearTimeout(t);
    await this.watcher?.close().catch(() => {}); // one made while stopping
  }

  kick(): void {
    for (const u of this.units.values()) u.waitsForSend = false;
    if (!this.stopped) this.schedule();
  }

  /** growing_files: how often a unit that keeps changing is looked at for a file worth sending while it grows. */
  private get growLookMs() {
    return Math.min(1_000, Math.max(100, Math.floor(this.timeout / 4)));
  }

  private get sendsGrowing(): boolean {
    return this.fields.growing_files === true && !this.growingRefused;
  }

  /** When a changed unit is looked at: once quiet for `timeout`, or (growing_files) every little while. */
  private dueAt(u: Unit): number {
    const quiet = u.lastEventAt + this.timeout;
    return this.sendsGrowing ? Math.min(quiet, u.lookedAt + this.growLookMs) : quiet;
  }

  private error(message: string | null): void {
    this.host.outcome(this.spec.id, { error: message });
  }

  private async open(): Promise<void> {
    this.rescanTimer = undefined;
    const st = await fs.stat(this.root).catch((err: NodeJS.ErrnoException) => err);
    if (this.stopped) return;
    if (st instanceof Error || !st.isDirectory()) {
      this.error(`path ${this.root} is not a folder that can be read (${st instanceof Error ? (st.code ?? st.message) : 'not a folder'}); looking again later`);
      this.rescanTimer = setTimeout(() => (this.opened = this.open()), this.rescanMs);
      this.rescanTimer.unref();
      return;
    }
    const watcher = watch(this.root, { ignoreInitial: true, ignorePermissionErrors: true, persistent: true, followSymlinks: true });
    this.watcher = watcher;
    watcher.on('all', (event, p) => this.heard(event, p));
    watcher.on('error', (err) => this.error(`watching ${this.root}: ${messageOf(err)}`));
    await new Promise<void>((resolve) => {
      watcher.once('ready', () => resolve());
      this.halt.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    if (this.stopped) return;
    const present = await this.rescan(true);
    // Sends of units that are gone no longer count: a new folder of the same name is new.
    if (present) for (const unit of unitsWithSends(this.host.ctx.db, this.spec.id)) if (!this.units.has(unit)) retireUnit(this.host.ctx.db, this.spec.id, unit);
    this.error(null);
  }

  /** A unit's name from its top-level entry, or undefined when that entry is not one. */
  private unitName(name: string, isDir: boolean): string | undefined {
    if (isClutter(name) || this.blacklisted(name)) return undefined;
    if (!isDir && !this.fields.upload_loose_files) return undefined;
    return name;
  }

  private touch(name: string, at = Date.now()): void {
    const u = this.units.get(name);
    if (u) {
      u.lastEventAt = Math.max(u.lastEventAt, at);
      u.dirty = true;
    } else this.units.set(name, { name, lastEventAt: at, dirty: true, lookedAt: at, waitsForSend: false });
  }

  private heard(event: string, p: string): void {
    if (this.stopped) return;
    const rel = path.relative(this.root, p);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return;
    const segs = rel.split(path.sep);
    const top = segs[0]!;
    if (segs.length === 1 && (event === 'unlink' || event === 'unlinkDir')) return this.gone(top);
    const isDir = segs.length > 1 || event === 'addDir' || event === 'unlinkDir';
    const name = this.unitName(top, isDir);
    if (name === undefined) return;
    this.touch(name);
    this.schedule();
  }

  private gone(name: string): void {
    this.units.delete(name);
    retireUnit(this.host.ctx.db, this.spec.id, name);
  }

  /** Lists the top of the folder: new units are added (all of them at the start), vanished ones dropped. Answers whether it could. */
  private async rescan(first: boolean): Promise<boolean> {
    if (!first) this.rescanTimer = undefined;
    let listed: import('node:fs').Dirent[];
    try {
      // A read of the watched folder's disk: it waits its turn with the uploads' reads.
      listed = await this.host.ctx.disks.runInFolder('read', this.root, () => fs.readdir(this.root, { withFileTypes: true }));
    } catch (err) {
      this.error(`path ${this.root} cannot be listed (${(err as NodeJS.ErrnoException).code ?? messageOf(err)})`);
      this.later();
      return false;
    }
    if (this.stopped) return false;
    const seen = new Set<string>();
    for (const d of listed) {
      let isDir = d.isDirectory();
      if (d.isSymbolicLink()) isDir = await fs.stat(path.join(this.root, d.name)).then((s) => s.isDirectory(), () => false);
      else if (!isDir && !d.isFile()) continue;
      const name = this.unitName(d.name, isDir);
      if (name === undefined) continue;
      seen.add(name);
      if (!this.units.has(name)) this.touch(name);
    }
    for (const name of [...this.units.keys()]) if (!seen.has(name)) this.gone(name);
    this.schedule();
    this.later();
    return true;
  }

  private later(): void {
    if (this.stopped || this.rescanTimer) return;
    this.rescanTimer = setTimeout(() => void this.rescan(false), this.rescanMs);
    this.rescanTimer.unref();
  }

  /** Arms the timer for the first unit that will be due. */
  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    let first = Infinity;
    for (const u of this.units.values()) if (u.dirty && !u.waitsForSend) first = Math.min(first, this.dueAt(u));
    if (first === Infinity) return;
    this.timer = setTimeout(() => {
      this.busy = this.busy.then(() => this.checkDue()).catch((err) => this.error(messageOf(err)));
    }, Math.max(0, first - Date.now()));
    this.timer.unref();
  }

  private async checkDue(): Promise<void> {
    for (const u of [...this.units.values()]) {
      if (this.stopped) return;
      if (!u.dirty || u.waitsForSend || this.dueAt(u) > Date.now() || this.units.get(u.name) !== u) continue;
      // A send under way: the unit is looked at again once it has settled (kick).
      if (unitBusy(this.host.ctx.db, this.spec.id, u.name)) {
        u.waitsForSend = true;
        continue;
      }
      u.lookedAt = Date.now();
      await this.check(u);
    }
    this.schedule();
  }

  private retryLater(u: Unit): void {
    u.dirty = true;
    u.lastEventAt = Date.now() - this.timeout + this.host.tuning.retryMs;
    u.lookedAt = Infinity; // not sooner for a file growing in it
  }

  private async check(u: Unit): Promise<void> {
    u.dirty = false;
    const started = Date.now();
    let scanned: ScannedEntry[];
    try {
      scanned = await scanUnit(this.root, u.name, this.blacklisted);
    } catch (err) {
      const gone = await fs.lstat(path.join(this.root, u.name)).then(() => false, () => true);
      if (gone) return this.gone(u.name);
      this.error(`${u.name}: ${messageOf(err)}`);
      if (!(err instanceof WalkError)) this.retryLater(u);
      return;
    }
    // Heard a change meanwhile: its own look will come (a file growing in it may still go now).
    const heard = u.dirty;
    if (this.stopped || (heard && !this.sendsGrowing) || this.units.get(u.name) !== u) return;
    let newest = -Infinity;
    for (const s of scanned) if (s.entry.kind === 'file' && s.entry.mtimeMs <= started + FUTURE_SLACK_MS) newest = Math.max(newest, s.entry.mtimeMs);
    const sent = sentKeys(this.host.ctx.db, this.spec.id, u.name);
    const fresh = scanned.filter((s) => !sent.has(sentKey(sentFileOf(s))));
    if (newest > started - this.timeout) {
      // Written within the timeout without an event reaching us: not settled yet.
      u.dirty = true;
      u.lastEventAt = Math.max(u.lastEventAt, Math.min(newest, started));
      const growing = this.growingNow(fresh, started);
      if (growing) await this.send(u, fresh, growing);
      return;
    }
    if (heard || !fresh.some((s) => s.entry.kind === 'file')) return;
    await this.send(u, fresh);
  }

  /**
   * growing_files: the files of a unit still being written, once one of them
   * holds a full part (nothing of it could go before); else undefined, and the
   * unit waits for its quiet time as without the option.
   */
  private growingNow(fresh: ScannedEntry[], started: number): string[] | undefined {
    if (!this.sendsGrowing) return undefined;
    const part = Math.max(MIN_CHUNK_SIZE, this.host.ctx.config.chunkSize);
    const growing = fresh.filter((s) => s.entry.kind === 'file' && s.entry.mtimeMs > started - this.timeout);
    return growing.some((s) => s.entry.size >= part) ? growing.map((s) => s.entry.localPath) : undefined;
  }

  private async send(u: Unit, fresh: ScannedEntry[], growing?: string[]): Promise<void> {
    const { db } = this.host.ctx;
    const f = this.fields;
    const id = newUploadId();
    const files = fresh.map(sentFileOf);
    insertEntry(db, { id, automation_id: this.spec.id, direction: 'send', unit: u.name, fingerprint: fingerprint(files), name: u.name }, files);
    // Recorded on disk before the service hears of it: after a crash the record finds the upload, or that there is none.
    await db.synced();
    const unitPath = path.join(this.root, u.name);
    const packageName = `${u.name}${f.package_name_suffix ?? ''}`.slice(0, 255);
    if (this.stopped) {
      deleteEntry(db, id); // the agent stops: the unit is looked at again at the next start
      return;
    }
    try {
      // Staged here, dropped by the upload's creation whatever it answers.
      const plan = await planOf(db, u.name, fresh.map((s) => s.entry));
      if (growing) plan.growing = { paths: growing, quietMs: this.timeout };
      let packageId: string;
      if (this.spec.type === 'team_upload') {
        const tag = f.tag_id || f.tag_name ? { ...(f.tag_id ? { id: f.tag_id } : {}), ...(f.tag_name ? { name: f.tag_name } : {}) } : undefined;
        const body: CreateUploadBody = {
          team_id: f.team_id!,
          paths: [unitPath],
          recipients: f.recipient_emails ?? [],
          package_name: packageName,
          package_description: f.message ?? '',
          ...(f.priority !== undefined ? { priority: f.priority } : {}),
          ...(f.download_password ? { password: f.download_password } : {}),
          ...(f.delete_after !== undefined ? { delete_after: f.delete_after } : {}),
          ...(f.download_limit !== undefined ? { download_limit: f.download_limit } : {}),
          ...(tag ? { tag } : {}),
          ...(f.unlimited_storage ? { unlimited_storage: true } : {}),
        };
        packageId = (await this.host.uploads.create(body, { id, plan })).package_id;
      } else {
        const body: PortalUploadBody = {
          subdomain: f.subdomain!,
          sender_email: f.sender_email!,
          paths: [unitPath],
          package_name: packageName,
          package_description: f.message ?? '',
          ...(f.priority !== undefined ? { priority: f.priority } : {}),
          ...(f.access_code ? { access_code: f.access_code } : {}),
        };
        packageId = (await this.host.uploads.createPortal(body, { id, plan })).package_id;
      }
      // The upload's own events may have moved the record on already.
      const e = getEntry(db, id);
      if (e) updateEntry(db, id, e.state === 'pending' ? { state: 'transferring', package_id: packageId } : { package_id: packageId });
      this.host.ctx.log.info({ automation: this.spec.id, unit: u.name, upload: id, files: files.length }, 'watch folder: sending');
      this.host.outcome(this.spec.id, { ran: true, error: null });
    } catch (err) {
      if (getUpload(db, id)) return; // made after all: its events carry on
      deleteEntry(db, id);
      if (err instanceof GrowingRefused) {
        // Sent again once complete, as without growing_files.
        this.growingRefused = true;
        this.error(`${u.name}: ${err.message}`);
        return;
      }
      this.error(`${u.name}: ${messageOf(err)}`);
      // A file growing in it is not tried again every look: the unit waits for its quiet time (or the retry).
      if (growing) u.lookedAt = Infinity;
      // The service or the session will be back: try again. Else (refused input) wait for the next change.
      if (isTransient(err)) this.retryLater(u);
    }
  }
}
