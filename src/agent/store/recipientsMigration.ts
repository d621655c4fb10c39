// An e-mailed upload keeps its recipients, so that Transfers shows and finds
// them (the service has them too, but the list reads the agent's records only).
import type { Migration } from './migrations.js';

export const uploadRecipientsMigration: Migration = {
  version: 9,
  name: 'upload_recipients',
  /** A JSON array of addresses; null for a link-type or Portal upload. */
  sql: 'ALTER TABLE uploads ADD COLUMN recipients TEXT;',
};
