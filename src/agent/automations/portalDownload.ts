// Portal downloads (portal_download, all_portals_download): every Package a
// Portal received that was finalized at or after `effective_time` is fetched
// into `dst_folder` through the agent's downloads, once. The automation follows
// the service's Team event stream (events.ts in this folder) and fetches a
// watched Portal's Package as soon as its package.finalized arrives; it also
// polls (every FERRY_AGENT_AUTOMATION_POLL_MS, 30 s by default, and at once when
// the session comes back), listing each Portal's Packages by finalization time
// from a little before the last one it saw: the safety net, and all there is
// with a service that has no event stream. Each Package is recorded, with the id its download
// will have, before anything is asked of the service; a Package recorded is never
// fetched again. The download goes through a Link the automation makes with the
// session's credentials (unlimited accesses, a random password), deleted once
// the download is complete.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { AllPortalsDownloadSettings, PortalDownloadSettings } from '../../api/agent/automations.js';
import type { Portal, PortalPackage } from '../../client/portals.js';
import { listPortalPackages, listTeamPortals } from '../../client/portals.js';
import { createLink } from '../../client/uploads.js';
import type { Credentials } from '../../client/http.js';
import { fromHosted } from '../services/session.js';
import { packageFolderName } from '../engine/safePath.js';
import { entriesOf, fetchedPackage, getAutomation, getEntry, insertEntry, setRunState, updateEntry, type EntryRow, type RunState } from '../store/automationStore.js';
import { isTransient, messageOf, pause, type Runner, type RunnerHost, type RunnerSpec } from './runner.js';
import { followTeamEvents, type FinalizedNotice } from './teamEvents.js';

type Fields = PortalDownloadSettings & AllPortalsDownloadSettings;

/** Pages of a Team's Portal list read at most (50 a page). */
const MAX_PORTAL_PAGES = 1_000;
/** stop() waits this long at most for the poll under way. */
const STOP_WAIT_MS = 5_000;

export class PortalDownload implements Runner {
  private readonly stopping = new AbortController();
  private wake = new AbortController();
  private nudge = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private following: Promise<void> = Promise.resolve();
  /** A full poll is asked for before its time (kick). */
  private pollNow = false;
  /** Packages the event stream told of, taken by the loop (one worker: a Package is never begun twice at once). */
  private arrivals: FinalizedNotice[] = [];
  /** The Portals the last poll found, by id: an event of one of them is fetched at once. */
  private watched = new Map<string, Portal>();
  /** Resolved by the first poll that found the Portals (the stream needs their Team), or by stop(). */
  private foundPortals!: () => void;
  private readonly found = new Promise<void>((ok) => (this.foundPortals = ok));

  constructor(
    private readonly host: RunnerHost,
    private readonly spec: RunnerSpec,
  ) {}

  private get fields(): Fields {
    return this.spec.fields as Fields;
  }

  start(): void {
    this.loop = this.run();
    this.following = this.follow();
  }

  kick(): void {
    this.pollNow = true;
    this.wake.abort();
    // A stream waiting to reconnect (no session a moment ago) tries at once.
    this.nudge.abort();
    this.nudge = new AbortController();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.wake.abort();
    let t: NodeJS.Timeout | undefined;
    this.foundPortals();
    await Promise.race([Promise.all([this.loop, this.following]), new Promise((r) => (t = setTimeout(r, STOP_WAIT_MS)))]);
    clearTimeout(t);
  }

  private get stopped() {
    return this.stopping.signal.aborted;
  }

  /**
   * Polls until stopped: a bounded amount of work each time, then a pause that a
   * kick cuts short. Packages the event stream tells of are begun in between.
   */
  private async run(): Promise<void> {
    let due = 0;
    while (!this.stopped) {
      this.wake = new AbortController();
      try {
        if (this.pollNow || Date.now() >= due) {
          this.pollNow = false;
          due = Date.now() + this.host.tuning.pollMs;
          await this.poll();
        } else {
          await this.takeArrivals();
        }
      } catch (err) {
        if (this.stopped) return;
        this.host.outcome(this.spec.id, { error: messageOf(err) });
      }
      if (this.stopped) return;
      if (this.pollNow || this.arrivals.length > 0) continue;
      await pause(Math.max(0, due - Date.now()), AbortSignal.any([this.wake.signal, this.stopping.signal]));
    }
  }

  private async poll(): Promise<void> {
    const { db } = this.host.ctx;
    const auth = this.host.session.credentials();
    await this.takeArrivals(auth);
    // Fetches recorded but not begun (the service failed, or the agent stopped): first.
    for (const e of entriesOf(db, this.spec.id)) if (e.direction === 'fetch' && e.state === 'pending') await this.fetch(e, auth);

    const effective = this.fields.effective_time!;
    const row = getAutomation(db, this.spec.id);
    if (!row || this.stopped) return;
    const state = JSON.parse(row.run_state) as RunState;
    const marks = { ...state.watermarks };
    let failed: unknown;
    const portals = await this.portals(auth);
    this.watched = new Map(portals.map((p) => [p.id, p]));
    this.foundPortals();
    for (const portal of portals) {
      if (this.stopped) return;
      try {
        const r = await this.pollPortal(portal, effective, marks[portal.id], auth);
        if (r.newest) marks[portal.id] = r.newest;
        failed ??= r.failed;
      } catch (err) {
        if (this.stopped) return;
        failed ??= err;
        this.host.outcome(this.spec.id, { error: `Portal ${portal.subdomain}: ${messageOf(err)}` });
      }
    }
    setRunState(db, this.spec.id, { ...state, watermarks: marks });
    if (failed === undefined) this.host.outcome(this.spec.id, { error: null });
  }

  /**
   * Lists one Portal's Packages finalized since a little before `mark` (the latest
   * finalization seen), oldest first, and fetches the new ones. Answers the latest
   * finalization it saw: pages go by finalization time, so everything before it
   * has been seen (what commits late falls within the overlap). A Package that
   * could not begin is recorded as pending and tried again at the next poll.
   */
  private async pollPortal(portal: Portal, effective: string, mark: string | undefined, auth: Credentials): Promise<{ newest?: string; failed?: unknown }> {
    const { db } = this.host.ctx;
    const from = mark ? new Date(Math.max(Date.parse(effective), Date.parse(mark) - this.host.tuning.overlapMs)).toISOString() : effective;
    let newest = mark;
    let failed: unknown;
    for (let page = 1; page <= this.host.tuning.maxPagesPerPoll; page++) {
      const r = await listPortalPackages(this.host.session.hosted, portal.id, { page, status: 'finalized', finalized_at_start: from, sort: 'finalized_at' }, {
        auth,
        signal: this.stopping.signal,
      }).catch(fromHosted);
      for (const pkg of r.records) {
        if (this.stopped) return { newest, failed };
        if (!pkg.finalized_at || pkg.finalized_at < effective) continue;
        if (!newest || pkg.finalized_at > newest) newest = pkg.finalized_at;
        if (fetchedPackage(db, this.spec.id, pkg.id)) continue;
        failed ??= await this.begin(portal, pkg, auth);
      }
      if (page * r.metadata.limit >= r.metadata.total || r.records.length === 0) break;
    }
    return { newest, failed };
  }

  /** The Portals to look at: the one named by subdomain (among the session's Teams), or every Portal of the Team. */
  private async portals(auth: Credentials): Promise<Portal[]> {
    const hosted = this.host.session.hosted;
    const f = this.fields;
    if (this.spec.type === 'all_portals_download') return teamPortals(hosted, f.team_id!, auth, this.stopping.signal);
    const want = f.portal_subdomain!.toLowerCase();
    for (const team of await this.host.session.teams()) {
      const found = (await teamPortals(hosted, team.id, auth, this.stopping.signal, want)).find((p) => p.subdomain.toLowerCase() === want);
      if (found) return [found];
    }
    throw new Error(`no Portal "${f.portal_subdomain}" in the signed-in user's Teams`);
  }

  /** Follows the Team's event stream until stopped (teamEvents.ts); the poll goes on regardless. */
  private async follow(): Promise<void> {
    await this.found;
    if (this.stopped) return;
    const teamId = this.spec.type === 'all_portals_download' ? this.fields.team_id! : this.watched.values().next().value?.team_id;
    if (!teamId) return;
    await followTeamEvents({
      baseUrl: this.host.session.hosted.baseUrl,
      teamId,
      credentials: () => this.host.session.credentials(),
      refused: (auth, why) => this.host.session.refused(auth, why),
      signal: this.stopping.signal,
      nudged: () => this.nudge.signal,
      log: this.host.ctx.log.child({ automation: this.spec.id }),
      finalized: (n) => this.arrived(n),
      // Events may have been missed (before the stream opened, or a replay that could not be complete): look at the lists.
      reset: () => this.kick(),
    });
  }

  /** A Package finalized into a Portal of the Team: the loop fetches it now when the Portal is watched. */
  private arrived(n: FinalizedNotice): void {
    if (this.stopped || !n.portalId) return;
    if (!this.watched.has(n.portalId)) {
      // A Portal made since the last poll: all_portals_download watches it too, the poll finds it.
      if (this.spec.type === 'all_portals_download') this.kick();
      return;
    }
    if (n.finalizedAt < this.fields.effective_time!) return;
    this.arrivals.push(n);
    this.wake.abort();
  }

  /** Begins the Packages the stream told of that are not recorded yet (in the loop, as the poll's are). */
  private async takeArrivals(auth?: Credentials): Promise<void> {
    const { db } = this.host.ctx;
    const taken = this.arrivals.splice(0);
    if (taken.length === 0) return;
    // Without a session they are dropped: the poll when it comes back finds them.
    auth ??= this.host.session.credentials();
    for (const n of taken) {
      if (this.stopped) return;
      const portal = this.watched.get(n.portalId!);
      if (!portal || fetchedPackage(db, this.spec.id, n.packageId)) continue;
      await this.begin(portal, { id: n.packageId, name: n.name, finalized_at: n.finalizedAt }, auth);
    }
  }

  /** Records the Package, then fetches it; answers the error when it could not begin. */
  private async begin(portal: Portal, pkg: Pick<PortalPackage, 'id' | 'name' | 'finalized_at'>, auth: Credentials): Promise<unknown> {
    const { db } = this.host.ctx;
    const f = this.fields;
    const dst = f.create_portal_subfolder ? path.join(f.dst_folder!, packageFolderName(portal.name, portal.subdomain)) : f.dst_folder!;
    const id = randomUUID();
    insertEntry(db, { id, automation_id: this.spec.id, direction: 'fetch', package_id: pkg.id, portal_id: portal.id, name: pkg.name, finalized_at: pkg.finalized_at, dst_folder: dst });
    await db.synced();
    return this.fetch(getEntry(db, id)!, auth);
  }

  /** A Link of the Package (made once), then the download with the id recorded for it. */
  private async fetch(e: EntryRow, auth: Credentials): Promise<unknown> {
    const { db } = this.host.ctx;
    const f = this.fields;
    try {
      let url = e.link_url;
      let password = e.link_password;
      if (!url) {
        password = randomBytes(18).toString('base64url');
        const link = await createLink(this.host.session.hosted, e.package_id!, { password, access_limit: null }, { auth, signal: this.stopping.signal }).catch(fromHosted);
        url = link.url;
        updateEntry(db, e.id, { link_id: link.id, link_url: url, link_password: password });
        await db.synced();
      }
      if (this.stopped) return undefined; // begun at the next start, with the Link recorded
      await this.host.downloads.create(
        {
          url,
          dst_folder: e.dst_folder ?? f.dst_folder!,
          ...(password ? { password } : {}),
          create_package_folder: f.create_package_folder ?? true,
          ...(f.download_priority !== undefined ? { priority: f.download_priority } : {}),
        },
        { id: e.id },
      );
      const now = getEntry(db, e.id);
      if (now?.state === 'pending') updateEntry(db, e.id, { state: 'transferring', error: null });
      this.host.ctx.log.info({ automation: this.spec.id, package: e.package_id, download: e.id }, 'portal download: fetching');
      this.host.outcome(this.spec.id, { ran: true, error: null });
      return undefined;
    } catch (err) {
      if (this.stopped) return err;
      if (hasDownload(this.host, e.id)) {
        updateEntry(db, e.id, { state: 'transferring' });
        return undefined;
      }
      const message = `${e.name}: ${messageOf(err)}`;
      // Refused for good (the Package expired or is gone, the folder cannot be used): not tried again unless the automation changes.
      updateEntry(db, e.id, isTransient(err) ? { error: messageOf(err) } : { state: 'failed', error: messageOf(err) });
      this.host.outcome(this.spec.id, { error: message });
      return err;
    }
  }
}

function hasDownload(host: RunnerHost, id: string): boolean {
  try {
    host.downloads.get(id);
    return true;
  } catch {
    return false;
  }
}

/** Every Portal of a Team (or those whose subdomain contains `subdomain`), page by page. */
async function teamPortals(hosted: RunnerHost['session']['hosted'], teamId: string, auth: Credentials, signal: AbortSignal, subdomain?: string): Promise<Portal[]> {
  const out: Portal[] = [];
  for (let page = 1; page <= MAX_PORTAL_PAGES; page++) {
    const r = await listTeamPortals(hosted, teamId, { page, ...(subdomain ? { subdomain } : {}) }, { auth, signal }).catch(fromHosted);
    out.push(...r.records);
    if (page * r.metadata.limit >= r.metadata.total || r.records.length === 0) break;
  }
  return out;
}
