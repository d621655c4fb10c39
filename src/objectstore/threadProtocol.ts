// The messages between the service and the store's thread (thread.ts, threadMain.ts).
import type { ObjectStoreOptions } from './index.js';
import type { LocalStore } from './local.js';
import type { PartStored } from './store.js';

/** `reportParts`: post a `stored` message for every part stored (functions do not cross threads). */
export type ThreadOptions = Omit<ObjectStoreOptions, 'logger' | 'onPartStored'> & { logLevel: string; reportParts?: boolean };

export interface CallMessage {
  type: 'call';
  id: number;
  op: keyof LocalStore | 'close';
  args: unknown[];
}

/** A failure as data: `s3` when it was an S3Error (code and message rebuild it). */
export interface ErrorData {
  s3: boolean;
  code?: string;
  message: string;
}

export type FromStore =
  | { type: 'ready'; url: string; port: number }
  | { type: 'failed'; message: string }
  | { type: 'stored'; part: PartStored }
  | { type: 'answer'; id: number; ok: true; value: unknown }
  | { type: 'answer'; id: number; ok: false; error: ErrorData };
