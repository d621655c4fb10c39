// Automations: Portal downloads and watch folders. Create, list, get, update,
// delete, enable and disable (every route needs the session, as the spec's
// group says); each enabled automation has a runner (automations/), started
// once the agent has resumed its transfers and stopped before they close.
// Changes of records are published on the event feed as `automation` events.
import { randomBytes } from 'node:crypto';
import type { AgentContext } from '../context.js';
import type { SessionService } from './session.js';
import type { UploadsService } from './uploads.js';
import type { DownloadsService } from './downloads.js';
import {
  SECRET_MASK,
  UPDATE_BODIES,
  type AutomationFields,
  type AutomationPackage,
  type AutomationRecord,
  type AutomationType,
} from '../../api/agent/automations.js';
import { invalid, notFound } from '../errors.js';
import {
  deleteAutomation,
  entriesOf,
  fileCountOf,
  forgetFailedFetches,
  getAutomation,
  insertAutomation,
  listAutomations,
  setEnabled,
  setOutcome,
  updateAutomation,
  type AutomationRow,
} from '../store/automationStore.js';
import type { Runner, RunnerHost, RunnerSpec } from '../automations/runner.js';
import { WatchFolder } from '../automations/watchFolder.js';
import { PortalDownload } from '../automations/portalDownload.js';
import { createSettler, downloadOf, uploadOf } from '../automations/settle.js';
import { automationTuning } from '../automations/timing.js';
import { checkFields, isWatch, withDefaults } from '../automations/validate.js';

const SECRETS = ['download_password', 'access_code'] as const;

/** The body's fields this kind knows (others are ignored, as on every route, and never stored). */
function known(type: AutomationType, body: AutomationFields): AutomationFields {
  const keys = Object.keys(UPDATE_BODIES[type].properties);
  return Object.fromEntries(Object.entries(body).filter(([k, v]) => keys.includes(k) && v !== undefined)) as AutomationFields;
}

const fieldsOf = (row: AutomationRow) => JSON.parse(row.fields) as AutomationFields;

/** The record as the API shows it: secrets masked. */
export function automationRecord(row: AutomationRow): AutomationRecord {
  const fields = fieldsOf(row);
  for (const k of SECRETS) if (fields[k]) fields[k] = SECRET_MASK;
  return {
    automation_id: row.id,
    type: row.type,
    ...fields,
    name: row.name,
    enabled: row.enabled === 1,
    last_run_at: row.last_run_at,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Changing what a download automation looks at starts its listing afresh (what it fetched stays fetched). */
const RESETS_LISTING = ['effective_time', 'portal_subdomain', 'team_id'];

export function createAutomationsService(ctx: AgentContext, session: SessionService, uploads: UploadsService, downloads: DownloadsService) {
  const { db } = ctx;
  const runners = new Map<string, Runner>();
  let started = false;
  let closed = false;

  const publish = (row: AutomationRow | undefined) => {
    if (row) ctx.events.publish('automation', automationRecord(row));
  };
  const host: RunnerHost = {
    ctx,
    session,
    uploads,
    downloads,
    tuning: automationTuning(process.env),
    outcome(id, o) {
      if (closed) return; // a runner finishing its last step while the agent stops
      if (setOutcome(db, id, o)) publish(getAutomation(db, id));
    },
  };
  const settler = createSettler(host, (id) => runners.get(id)?.kick());

  // Transfers the automations started move on; a session that begins lets them all look again.
  const unsubscribe = ctx.events.subscribe((e) => {
    if (closed) return;
    try {
      if (e.type === 'upload') {
        const u = uploadOf(e.data);
        if (u) settler.upload(u);
      } else if (e.type === 'download') {
        const d = downloadOf(e.data);
        if (d) settler.download(d);
      } else if (e.type === 'session' && e.data.user) for (const r of runners.values()) r.kick();
    } catch (err) {
      ctx.log.warn({ err }, 'an automation could not follow a transfer');
    }
  });

  function specOf(row: AutomationRow): RunnerSpec {
    return { id: row.id, type: row.type, fields: fieldsOf(row) };
  }

  function startRunner(row: AutomationRow): void {
    if (!started || closed || row.enabled !== 1 || runners.has(row.id)) return;
    const runner = isWatch(row.type) ? new WatchFolder(host, specOf(row)) : new PortalDownload(host, specOf(row));
    runners.set(row.id, runner);
    runner.start();
  }

  async function stopRunner(id: string): Promise<void> {
    const r = runners.get(id);
    runners.delete(id);
    await r?.stop();
  }

  function mustGet(id: string, type?: AutomationType): AutomationRow {
    const row = getAutomation(db, id);
    if (!row || (type && row.type !== type)) throw notFound(`${type ?? 'automation'} automation ${id}`.replace('automation automation', 'automation'));
    return row;
  }

  const others = (except?: string) => ({
    list: listAutomations(db)
      .filter((r) => r.id !== except)
      .map((r) => ({ id: r.id, name: r.name, type: r.type, fields: fieldsOf(r) })),
  });

  return {
    list(): AutomationRecord[] {
      session.credentials();
      return listAutomations(db).map(automationRecord);
    },

    get(id: string): AutomationRecord {
      session.credentials();
      return automationRecord(mustGet(id));
    },

    /** The Packages it sent or fetched, oldest first. */
    packages(id: string): AutomationPackage[] {
      session.credentials();
      mustGet(id);
      return entriesOf(db, id).map((e) => ({
        transfer_id: e.id,
        direction: e.direction,
        package_id: e.package_id,
        name: e.name,
        state: e.state,
        ...(e.portal_id ? { portal_id: e.portal_id } : {}),
        ...(e.direction === 'send' ? { files: fileCountOf(db, e.id), fingerprint: e.fingerprint ?? '' } : {}),
        ...(e.direction === 'send' && e.link_url ? { link_url: e.link_url } : {}),
        ...(e.error ? { error: e.error } : {}),
        created_at: e.created_at,
        updated_at: e.updated_at,
      }));
    },

    async create(type: AutomationType, body: AutomationFields): Promise<AutomationRecord> {
      session.credentials();
      const given = withDefaults(type, known(type, body));
      const fields = await checkFields(type, given, new Set(Object.keys(given)), { session }, others());
      const id = `aut_${randomBytes(12).toString('hex')}`;
      const { name, enabled, ...rest } = fields;
      insertAutomation(db, { id, type, name: name!, enabled: enabled !== false, fields: rest });
      const row = getAutomation(db, id)!;
      publish(row);
      startRunner(row);
      return automationRecord(row);
    },

    /** PUT /automations/{type}/{id}: the fields given change, the others stay; its runner starts again with them. */
    async update(type: AutomationType, id: string, body: AutomationFields): Promise<AutomationRecord> {
      session.credentials();
      const row = mustGet(id, type);
      const patch = known(type, body);
      const changed = new Set(Object.keys(patch));
      if (changed.size === 0) throw invalid('nothing to change: the body names no field of this automation');
      const old = { ...fieldsOf(row), name: row.name, enabled: row.enabled === 1 };
      // A masked secret sent back keeps the secret.
      for (const k of SECRETS) if (patch[k] === SECRET_MASK) patch[k] = old[k];
      const fields = await checkFields(type, { ...old, ...patch }, changed, { session }, others(id));
      await stopRunner(id);
      const { name, enabled, ...rest } = fields;
      updateAutomation(db, id, { name: name!, enabled: enabled !== false, fields: rest, resetRunState: RESETS_LISTING.some((k) => changed.has(k)) });
      forgetFailedFetches(db, id);
      const now = getAutomation(db, id)!;
      publish(now);
      startRunner(now);
      return automationRecord(now);
    },

    /** Stops it and forgets it with its history; the transfers it started go on as ordinary ones. */
    async remove(id: string): Promise<AutomationRecord> {
      session.credentials();
      const row = mustGet(id);
      await stopRunner(id);
      deleteAutomation(db, id);
      ctx.events.publish('automation', { automation_id: id, deleted: true });
      return automationRecord(row);
    },

    async setEnabled(id: string, enabled: boolean): Promise<AutomationRecord> {
      session.credentials();
      const row = mustGet(id);
      if ((row.enabled === 1) !== enabled) {
        if (!enabled) await stopRunner(id);
        setEnabled(db, id, enabled);
        if (enabled) forgetFailedFetches(db, id);
        const now = getAutomation(db, id)!;
        publish(now);
        startRunner(now);
      }
      return automationRecord(getAutomation(db, id)!);
    },

    /** At agent start, after the transfers resumed: records under way meet their transfers, then every enabled automation runs. */
    start(): void {
      if (started || closed) return;
      started = true;
      settler.reconcile();
      for (const row of listAutomations(db)) startRunner(row);
    },

    /** Stops every runner (before the transfers close); states stay for the next start. */
    async close(): Promise<void> {
      closed = true;
      unsubscribe();
      await Promise.all([...runners.keys()].map(stopRunner));
    },
  };
}

export type AutomationsService = ReturnType<typeof createAutomationsService>;
