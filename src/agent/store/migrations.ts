// Every schema migration of the agent's database, one module per area, applied in version order.
import { sessionMigration } from './sessionStore.js';
import { uploadRecipientsMigration, uploadsMigration } from './uploadStore.js';
import { downloadSeqMigration, downloadsMigration, downloadsRecoverableMigration } from './downloadStore.js';
import { automationsMigration } from './automationStore.js';
import { gatewaysMigration } from './gatewayStore.js';
import { uploadLinksMigration } from './uploadLinkStore.js';
import { canceledMigration } from './canceledTransfers.js';
import { uploadTotalsMigration } from './uploadTotals.js';
import { growingFilesMigration } from './growingFiles.js';
import { disksMigration } from './diskStore.js';

export interface Migration { version: number; name: string; sql: string }

export const migrations: Migration[] = [sessionMigration, uploadsMigration, downloadsMigration, downloadsRecoverableMigration, automationsMigration, gatewaysMigration, uploadLinksMigration, canceledMigration, uploadRecipientsMigration, uploadTotalsMigration, downloadSeqMigration, disksMigration, growingFilesMigration];
