// Canceled transfers, uploads and downloads alike: they stay in the history with
// state `error`, error "Canceled", and when it happened (the column both tables
// gain). The state names are the contract's, so canceled is a column.
import type { Migration } from './migrations.js';

export const canceledMigration: Migration = {
  version: 8,
  name: 'transfers_canceled_at',
  sql: `ALTER TABLE uploads ADD COLUMN canceled_at TEXT;
  ALTER TABLE downloads ADD COLUMN canceled_at TEXT;`,
};

/** What a canceled transfer's `error` says. */
export const CANCELED = 'Canceled';
