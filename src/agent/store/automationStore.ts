// Automations as SQLite keeps them: each automation (its kind's fields as JSON,
// and what it runs on, such as a download automation's high-water mark), and
// every Package it sent or fetched. A Package is recorded, with the id its
// upload or download will have, before that transfer is made: after a crash the
// record tells whether the transfer exists, so nothing is sent or fetched twice.
// A send also records each file it holds (path below the watched folder, size,
// modification time): what is recorded is never sent again.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';
import type { AutomationFields, AutomationPackageState, AutomationType } from '../../api/agent/automations.js';

export const automationsMigration: Migration = {
  version: 5,
  name: 'automations',
  sql: `CREATE TABLE automations (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ('portal_download','all_portals_download','team_upload','portal_upload')),
    name TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    fields TEXT NOT NULL,
    run_state TEXT NOT NULL DEFAULT '{}',
    last_run_at TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE automation_packages (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('send','fetch')),
    unit TEXT,
    fingerprint TEXT,
    package_id TEXT,
    portal_id TEXT,
    name TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending','transferring','complete','failed','cancelled')),
    retired INTEGER NOT NULL DEFAULT 0,
    link_id TEXT,
    link_url TEXT,
    link_password TEXT,
    error TEXT,
    finalized_at TEXT,
    dst_folder TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE UNIQUE INDEX automation_packages_fetched_once ON automation_packages (automation_id, package_id) WHERE direction = 'fetch';
  CREATE INDEX automation_packages_by_unit ON automation_packages (automation_id, unit);
  CREATE TABLE automation_sent_files (
    entry_id TEXT NOT NULL REFERENCES automation_packages(id) ON DELETE CASCADE,
    rel_path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ms REAL NOT NULL,
    PRIMARY KEY (entry_id, rel_path)
  );`,
};

export interface AutomationRow {
  id: string;
  type: AutomationType;
  name: string;
  enabled: number;
  /** JSON of the kind's fields. */
  fields: string;
  /** JSON of what the automation runs on (RunState). */
  run_state: string;
  last_run_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** What a download automation keeps between polls. */
export interface RunState {
  /** Per Portal id: the latest finalization seen; the next poll lists from a little before it. */
  watermarks?: Record<string, string>;
}

export interface EntryRow {
  /** The upload's or the download's id. */
  id: string;
  automation_id: string;
  direction: 'send' | 'fetch';
  /** Sends: the subfolder's or loose file's name below the watched folder. */
  unit: string | null;
  fingerprint: string | null;
  package_id: string | null;
  portal_id: string | null;
  name: string;
  state: AutomationPackageState;
  /** Sends: 1 once its folder was gone, so that a new folder of the same name is new. */
  retired: number;
  link_id: string | null;
  link_url: string | null;
  link_password: string | null;
  error: string | null;
  finalized_at: string | null;
  /** Fetches: the folder the download writes into (the Portal's subfolder included). */
  dst_folder: string | null;
  created_at: string;
  updated_at: string;
}

export interface SentFile { rel_path: string; size: number; mtime_ms: number }

const now = () => new Date().toISOString();

// ---------------------------------------------------------------- automations

export function insertAutomation(db: AgentDb, a: { id: string; type: AutomationType; name: string; enabled: boolean; fields: AutomationFields }): void {
  const t = now();
  db.sql('INSERT INTO automations (id, type, name, enabled, fields, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
    a.id, a.type, a.name, a.enabled ? 1 : 0, JSON.stringify(a.fields), t, t,
  );
}

export const getAutomation = (db: AgentDb, id: string) => db.sql('SELECT * FROM automations WHERE id = ?').get(id) as AutomationRow | undefined;

export const listAutomations = (db: AgentDb) => db.sql('SELECT * FROM automations ORDER BY created_at, id').all() as AutomationRow[];

export function updateAutomation(db: AgentDb, id: string, a: { name: string; enabled: boolean; fields: AutomationFields; resetRunState?: boolean }): void {
  db.sql(`UPDATE automations SET name = ?, enabled = ?, fields = ?, updated_at = ?${a.resetRunState ? ", run_state = '{}'" : ''} WHERE id = ?`).run(
    a.name, a.enabled ? 1 : 0, JSON.stringify(a.fields), now(), id,
  );
}

export function setEnabled(db: AgentDb, id: string, enabled: boolean): void {
  db.sql('UPDATE automations SET enabled = ?, updated_at = ? WHERE id = ?').run(enabled ? 1 : 0, now(), id);
}

export function setRunState(db: AgentDb, id: string, state: RunState): void {
  db.sql('UPDATE automations SET run_state = ? WHERE id = ?').run(JSON.stringify(state), id);
}

/** Records a run (a Package started) and/or the last error; answers whether the record changed. */
export function setOutcome(db: AgentDb, id: string, o: { ran?: boolean; error?: string | null }): boolean {
  const before = getAutomation(db, id);
  if (!before) return false;
  const lastRun = o.ran ? now() : before.last_run_at;
  const lastError = o.error === undefined ? before.last_error : o.error;
  if (lastRun === before.last_run_at && lastError === before.last_error) return false;
  db.sql('UPDATE automations SET last_run_at = ?, last_error = ? WHERE id = ?').run(lastRun, lastError, id);
  return true;
}

export function deleteAutomation(db: AgentDb, id: string): void {
  db.sql('DELETE FROM automations WHERE id = ?').run(id);
}

// ---------------------------------------------------------------- sent and fetched Packages

export function insertEntry(db: AgentDb, e: Pick<EntryRow, 'id' | 'automation_id' | 'direction' | 'name'> & Partial<EntryRow>, files: SentFile[] = []): void {
  const t = now();
  db.transaction(() => {
    db.sql(
      `INSERT INTO automation_packages (id, automation_id, direction, unit, fingerprint, package_id, portal_id, name, state, finalized_at, dst_folder, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
    ).run(
      e.id, e.automation_id, e.direction, e.unit ?? null, e.fingerprint ?? null, e.package_id ?? null, e.portal_id ?? null, e.name,
      e.finalized_at ?? null, e.dst_folder ?? null, t, t,
    );
    const add = db.sql('INSERT INTO automation_sent_files (entry_id, rel_path, size, mtime_ms) VALUES (?, ?, ?, ?)');
    for (const f of files) add.run(e.id, f.rel_path, f.size, f.mtime_ms);
  })();
}

export const getEntry = (db: AgentDb, id: string) => db.sql('SELECT * FROM automation_packages WHERE id = ?').get(id) as EntryRow | undefined;

export const entriesOf = (db: AgentDb, automationId: string) =>
  db.sql('SELECT * FROM automation_packages WHERE automation_id = ? ORDER BY created_at, id').all(automationId) as EntryRow[];

/** Entries whose transfer is not settled: pending or transferring, of every automation. */
export const openEntries = (db: AgentDb) =>
  db.sql("SELECT * FROM automation_packages WHERE state IN ('pending','transferring') ORDER BY created_at, id").all() as EntryRow[];

export const fetchedPackage = (db: AgentDb, automationId: string, packageId: string) =>
  db.sql("SELECT * FROM automation_packages WHERE automation_id = ? AND package_id = ? AND direction = 'fetch'").get(automationId, packageId) as EntryRow | undefined;

export function updateEntry(db: AgentDb, id: string, patch: Partial<Pick<EntryRow, 'state' | 'package_id' | 'link_id' | 'link_url' | 'link_password' | 'error'>>): void {
  const keys = Object.keys(patch) as (keyof typeof patch)[];
  if (keys.length === 0) return;
  db.sql(`UPDATE automation_packages SET ${keys.map((k) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ?`).run(
    ...keys.map((k) => patch[k] ?? null), now(), id,
  );
}

/** Whether a send of the unit is under way (recorded, its upload not settled). */
export const unitBusy = (db: AgentDb, automationId: string, unit: string) =>
  db.sql("SELECT 1 FROM automation_packages WHERE automation_id = ? AND unit = ? AND state IN ('pending','transferring') LIMIT 1").get(automationId, unit) !== undefined;

/** Fetches that failed for good are tried again after the automation is changed or enabled again. */
export function forgetFailedFetches(db: AgentDb, automationId: string): void {
  db.sql("DELETE FROM automation_packages WHERE automation_id = ? AND direction = 'fetch' AND state = 'failed'").run(automationId);
}

export function deleteEntry(db: AgentDb, id: string): void {
  db.sql('DELETE FROM automation_packages WHERE id = ?').run(id);
}

/** The units (subfolders, loose files) whose sends were made while they existed; marks them retired. */
export function retireUnit(db: AgentDb, automationId: string, unit: string): number {
  return db.sql("UPDATE automation_packages SET retired = 1, updated_at = ? WHERE automation_id = ? AND unit = ? AND retired = 0 AND state NOT IN ('pending','transferring')")
    .run(now(), automationId, unit).changes;
}

/** Units with sends that still count (not retired). */
export const unitsWithSends = (db: AgentDb, automationId: string) =>
  (db.sql("SELECT DISTINCT unit FROM automation_packages WHERE automation_id = ? AND direction = 'send' AND retired = 0").all(automationId) as { unit: string }[]).map((r) => r.unit);

/**
 * What counts as sent for a unit: the files of its sends that are not retired
 * and did not fail (pending and transferring ones too, so a folder is never
 * sent while its send is under way), keyed `rel_path\0size\0mtime_ms`.
 */
export function sentKeys(db: AgentDb, automationId: string, unit: string): Set<string> {
  const rows = db.sql(
    `SELECT f.rel_path, f.size, f.mtime_ms FROM automation_sent_files f JOIN automation_packages p ON p.id = f.entry_id
     WHERE p.automation_id = ? AND p.unit = ? AND p.retired = 0 AND p.state <> 'failed'`,
  ).all(automationId, unit) as SentFile[];
  return new Set(rows.map(sentKey));
}

export const sentKey = (f: SentFile) => `${f.rel_path}\0${f.size}\0${f.mtime_ms}`;

export const sentFilesOf = (db: AgentDb, entryId: string) =>
  db.sql('SELECT rel_path, size, mtime_ms FROM automation_sent_files WHERE entry_id = ? ORDER BY rel_path').all(entryId) as SentFile[];

export const fileCountOf = (db: AgentDb, entryId: string) =>
  (db.sql('SELECT COUNT(*) AS n FROM automation_sent_files WHERE entry_id = ?').get(entryId) as { n: number }).n;

/**
 * A send's files as its upload holds them now: a file sent while it grew
 * (growing_files) is recorded at its final size and time, so the next look
 * does not take it for a changed file and send it again.
 */
export function refreshSentFiles(db: AgentDb, entryId: string): void {
  const rows = db
    .sql("SELECT rel_dir, name, size, mtime_ms FROM upload_files WHERE upload_id = ? AND kind = 'file'")
    .all(entryId) as { rel_dir: string; name: string; size: number; mtime_ms: number }[];
  const update = db.sql('UPDATE automation_sent_files SET size = ?, mtime_ms = ? WHERE entry_id = ? AND rel_path = ?');
  db.transaction(() => {
    for (const r of rows) update.run(r.size, r.mtime_ms, entryId, r.rel_dir ? `${r.rel_dir}/${r.name}` : r.name);
  })();
}
