// Storage gateways in SQLite: one row per registered gateway, one per transfer
// it took part in, one per file of a transfer. A delivered file's bytes are
// recorded (bytes_done) only once flushed to disk, so after a crash the gateway
// fetches exactly the bytes that were not recorded, and a file recorded
// complete is acknowledged again without being fetched.
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';

export const gatewaysMigration: Migration = {
  version: 6,
  name: 'storage gateways',
  sql: `CREATE TABLE storage_gateways (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    permissions TEXT NOT NULL CHECK (permissions IN ('r','w')),
    root_path TEXT NOT NULL,
    secret TEXT NOT NULL,
    user_id INTEGER,
    group_id INTEGER,
    service_url TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE TABLE gateway_transfers (
    transfer_id TEXT PRIMARY KEY,
    gateway_id TEXT NOT NULL REFERENCES storage_gateways(id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('svc_to_cloud','cloud_to_svc')),
    package_id TEXT NOT NULL,
    package_name TEXT NOT NULL,
    root_path TEXT NOT NULL,
    folder TEXT,
    state TEXT NOT NULL CHECK (state IN ('running','complete','error')),
    files_total INTEGER NOT NULL DEFAULT 0,
    bytes_total INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX gateway_transfers_gateway ON gateway_transfers(gateway_id, created_at);
  CREATE TABLE gateway_files (
    transfer_id TEXT NOT NULL REFERENCES gateway_transfers(transfer_id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    rel_path TEXT NOT NULL,
    size INTEGER NOT NULL,
    local_dir TEXT,
    local_name TEXT,
    bytes_done INTEGER NOT NULL DEFAULT 0,
    etag TEXT,
    state TEXT NOT NULL CHECK (state IN ('pending','complete','refused')),
    error TEXT,
    PRIMARY KEY (transfer_id, seq)
  );`,
};

export interface GatewayRow {
  id: string;
  name: string;
  permissions: 'r' | 'w';
  root_path: string;
  secret: string;
  user_id: number | null;
  group_id: number | null;
  service_url: string;
  created_at: string;
  updated_at: string;
}

export interface TransferRow {
  transfer_id: string;
  gateway_id: string;
  direction: 'svc_to_cloud' | 'cloud_to_svc';
  package_id: string;
  package_name: string;
  /** The gateway's root when the transfer began: a later update does not move it. */
  root_path: string;
  /** svc_to_cloud: the Package's folder below the root, as the service named it. */
  folder: string | null;
  state: 'running' | 'complete' | 'error';
  files_total: number;
  bytes_total: number;
  error: string | null;
  created_at: string;
  updated_at: string;
}

export interface FileRow {
  transfer_id: string;
  seq: number;
  rel_path: string;
  size: number;
  /** Where it is written (absolute), once its folders are made. */
  local_dir: string | null;
  /** The name chosen (maybe `name (1).ext`), kept for resumes. */
  local_name: string | null;
  /** svc_to_cloud: bytes fetched and flushed; cloud_to_svc: bytes sent. */
  bytes_done: number;
  etag: string | null;
  state: 'pending' | 'complete' | 'refused';
  error: string | null;
}

const now = () => new Date().toISOString();

export const listGateways = (db: AgentDb): GatewayRow[] => db.sql('SELECT * FROM storage_gateways ORDER BY created_at, id').all() as GatewayRow[];

export const getGateway = (db: AgentDb, id: string): GatewayRow | undefined => db.sql('SELECT * FROM storage_gateways WHERE id = ?').get(id) as GatewayRow | undefined;

export function insertGateway(db: AgentDb, g: GatewayRow): void {
  db.sql(
    `INSERT INTO storage_gateways (id, name, permissions, root_path, secret, user_id, group_id, service_url, created_at, updated_at)
     VALUES (@id, @name, @permissions, @root_path, @secret, @user_id, @group_id, @service_url, @created_at, @updated_at)`,
  ).run(g);
}

export function updateGateway(db: AgentDb, id: string, set: Partial<Pick<GatewayRow, 'root_path' | 'user_id' | 'group_id'>>): void {
  const cols = Object.keys(set) as (keyof typeof set)[];
  if (cols.length === 0) return;
  db.prepare(`UPDATE storage_gateways SET ${cols.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @updated_at WHERE id = @id`).run({ ...set, id, updated_at: now() });
}

export const deleteGateway = (db: AgentDb, id: string): void => void db.sql('DELETE FROM storage_gateways WHERE id = ?').run(id);

export const getTransfer = (db: AgentDb, transferId: string): TransferRow | undefined =>
  db.sql('SELECT * FROM gateway_transfers WHERE transfer_id = ?').get(transferId) as TransferRow | undefined;

/** Records a transfer the first time the service begins it; a later begin (another attempt) keeps the first record. */
export function beginTransfer(db: AgentDb, t: Omit<TransferRow, 'state' | 'error' | 'created_at' | 'updated_at'>): TransferRow {
  const at = now();
  db.sql(
    `INSERT INTO gateway_transfers (transfer_id, gateway_id, direction, package_id, package_name, root_path, folder, state, files_total, bytes_total, error, created_at, updated_at)
     VALUES (@transfer_id, @gateway_id, @direction, @package_id, @package_name, @root_path, @folder, 'running', @files_total, @bytes_total, NULL, @at, @at)
     ON CONFLICT (transfer_id) DO UPDATE SET state = 'running', error = NULL, files_total = excluded.files_total, bytes_total = excluded.bytes_total, updated_at = excluded.updated_at`,
  ).run({ ...t, at });
  return getTransfer(db, t.transfer_id)!;
}

export function endTransfer(db: AgentDb, transferId: string, ok: boolean, error: string | null): void {
  db.sql('UPDATE gateway_transfers SET state = ?, error = ?, updated_at = ? WHERE transfer_id = ?').run(ok ? 'complete' : 'error', ok ? null : error, now(), transferId);
}

export const touchTransfer = (db: AgentDb, transferId: string): void => void db.sql('UPDATE gateway_transfers SET updated_at = ? WHERE transfer_id = ?').run(now(), transferId);

export const getFile = (db: AgentDb, transferId: string, seq: number): FileRow | undefined =>
  db.sql('SELECT * FROM gateway_files WHERE transfer_id = ? AND seq = ?').get(transferId, seq) as FileRow | undefined;

/** The file's row, made on first sight; a row whose path or size changed (another plan) starts over. */
export function fileRow(db: AgentDb, transferId: string, seq: number, relPath: string, size: number): FileRow {
  const row = getFile(db, transferId, seq);
  if (row && row.rel_path === relPath && row.size === size) return row;
  db.sql(
    `INSERT INTO gateway_files (transfer_id, seq, rel_path, size, local_dir, local_name, bytes_done, etag, state, error)
     VALUES (?, ?, ?, ?, NULL, NULL, 0, NULL, 'pending', NULL)
     ON CONFLICT (transfer_id, seq) DO UPDATE SET rel_path = excluded.rel_path, size = excluded.size, local_dir = NULL, local_name = NULL,
       bytes_done = 0, etag = NULL, state = 'pending', error = NULL`,
  ).run(transferId, seq, relPath, size);
  return getFile(db, transferId, seq)!;
}

export function setFile(db: AgentDb, transferId: string, seq: number, set: Partial<Omit<FileRow, 'transfer_id' | 'seq' | 'rel_path' | 'size'>>): void {
  const cols = Object.keys(set) as (keyof typeof set)[];
  if (cols.length === 0) return;
  db.prepare(`UPDATE gateway_files SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE transfer_id = @transfer_id AND seq = @seq`).run({ ...set, transfer_id: transferId, seq });
}

export interface TransferSummary extends TransferRow {
  files_done: number;
  bytes_done: number;
}

/** The gateway's latest transfers with their counters, newest first. */
export function recentTransfers(db: AgentDb, gatewayId: string, limit = 20): TransferSummary[] {
  // A transfer the service said complete is all done (an empty file sent to it has no part, hence no row).
  return db
    .sql(
      `SELECT t.*,
         CASE WHEN t.state = 'complete' THEN t.files_total
           ELSE (SELECT COUNT(*) FROM gateway_files f WHERE f.transfer_id = t.transfer_id AND f.state = 'complete') END AS files_done,
         CASE WHEN t.state = 'complete' THEN t.bytes_total
           ELSE (SELECT COALESCE(SUM(MIN(f.bytes_done, f.size)), 0) FROM gateway_files f WHERE f.transfer_id = t.transfer_id AND f.state != 'refused') END AS bytes_done
       FROM gateway_transfers t WHERE t.gateway_id = ? ORDER BY t.created_at DESC, t.transfer_id DESC LIMIT ?`,
    )
    .all(gatewayId, limit) as TransferSummary[];
}

/** Files of the gateway's deliveries left unfinished: their partial files go when the gateway is unregistered. */
export const unfinishedFiles = (db: AgentDb, gatewayId: string): FileRow[] =>
  db
    .sql(
      `SELECT f.* FROM gateway_files f JOIN gateway_transfers t ON t.transfer_id = f.transfer_id
       WHERE t.gateway_id = ? AND t.direction = 'svc_to_cloud' AND f.state = 'pending' AND f.local_name IS NOT NULL`,
    )
    .all(gatewayId) as FileRow[];
