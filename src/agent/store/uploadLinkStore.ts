// The addresses of the Links the agent made for an upload. The service keeps a
// Link's secret only hashed and shows it once, in the answer that made it, so the
// agent keeps the address to copy it again later; one of them is the transfer's
// own Link, the one "Copy link" copies (services/uploadLinks.ts).
import type { AgentDb } from './db.js';
import type { Migration } from './migrations.js';

export const uploadLinksMigration: Migration = {
  version: 7,
  name: 'upload_links',
  sql: `CREATE TABLE upload_links (
    link_id TEXT PRIMARY KEY,
    upload_id TEXT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    transfer INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  );
  CREATE INDEX upload_links_by_upload ON upload_links(upload_id);`,
};

export interface UploadLinkRow {
  link_id: string;
  upload_id: string;
  url: string;
  /** 1 for the transfer's own Link. */
  transfer: number;
  created_at: string;
}

export function keepUploadLink(db: AgentDb, uploadId: string, linkId: string, url: string, transfer: boolean): void {
  db.sql('INSERT OR REPLACE INTO upload_links (link_id, upload_id, url, transfer, created_at) VALUES (?, ?, ?, ?, ?)').run(linkId, uploadId, url, transfer ? 1 : 0, new Date().toISOString());
}

export const uploadLinks = (db: AgentDb, uploadId: string) =>
  db.sql('SELECT * FROM upload_links WHERE upload_id = ? ORDER BY created_at, link_id').all(uploadId) as UploadLinkRow[];

export const forgetUploadLink = (db: AgentDb, linkId: string) => void db.sql('DELETE FROM upload_links WHERE link_id = ?').run(linkId);
