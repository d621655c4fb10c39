// Each disk's settings as SQLite keeps them (migration 12), by disk id: the id
// comes from the mount point (engine/disks.ts), so a disk keeps its settings
// when its device number changes (a USB disk plugged in again, a reboot).
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';
import type { DiskPriority } from '../../api/agent/disks.js';

export const disksMigration: Migration = {
  version: 12,
  name: 'disk_settings',
  sql: `CREATE TABLE disk_settings (
    disk_id TEXT PRIMARY KEY,
    mount_point TEXT NOT NULL,
    priority TEXT NOT NULL CHECK (priority IN ('mixed_read_writes','prioritize_writes','prioritize_reads')),
    max_concurrent_readers INTEGER NOT NULL,
    max_concurrent_writers INTEGER NOT NULL,
    updated_at TEXT NOT NULL
  );`,
};

export interface DiskSettingsRow {
  disk_id: string;
  mount_point: string;
  priority: DiskPriority;
  max_concurrent_readers: number;
  max_concurrent_writers: number;
  updated_at: string;
}

export const listDiskSettings = (db: AgentDb): DiskSettingsRow[] => db.sql('SELECT * FROM disk_settings ORDER BY mount_point').all() as DiskSettingsRow[];

export function saveDiskSettings(db: AgentDb, row: Omit<DiskSettingsRow, 'updated_at'>): void {
  db.sql(
    `INSERT INTO disk_settings (disk_id, mount_point, priority, max_concurrent_readers, max_concurrent_writers, updated_at)
     VALUES (@disk_id, @mount_point, @priority, @max_concurrent_readers, @max_concurrent_writers, @updated_at)
     ON CONFLICT (disk_id) DO UPDATE SET mount_point = excluded.mount_point, priority = excluded.priority,
       max_concurrent_readers = excluded.max_concurrent_readers, max_concurrent_writers = excluded.max_concurrent_writers, updated_at = excluded.updated_at`,
  ).run({ ...row, updated_at: new Date().toISOString() });
}

/** The paths the agent's records name, by what they are used for: where its disks are found besides the files the engine touches. */
export function pathsInUse(db: AgentDb): { uploads: string[]; downloads: string[]; watch_folders: string[]; storage_gateways: string[] } {
  const col = (sql: string) => (db.sql(sql).all() as { p: string }[]).map((r) => r.p);
  // One file per upload not yet complete: an upload's files are mostly on one disk, and a Package may list 100,000.
  const uploads = col(`SELECT (SELECT local_path FROM upload_files f WHERE f.upload_id = u.id ORDER BY idx LIMIT 1) AS p FROM uploads u WHERE u.state != 'complete'`).filter(Boolean);
  const downloads = col(`SELECT DISTINCT dst_folder AS p FROM downloads WHERE state != 'complete'`);
  const watch_folders: string[] = [];
  for (const f of col('SELECT fields AS p FROM automations')) {
    try {
      const fields = JSON.parse(f) as { path?: unknown; dst_folder?: unknown };
      for (const p of [fields.path, fields.dst_folder]) if (typeof p === 'string') watch_folders.push(p);
    } catch {
      // Fields are written by the agent as JSON; a row that is not is skipped here.
    }
  }
  const storage_gateways = col('SELECT DISTINCT root_path AS p FROM storage_gateways');
  return { uploads, downloads, watch_folders, storage_gateways };
}
