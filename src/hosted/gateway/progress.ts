// A gateway transfer's byte counter while files are under way: the gateway's
// progress notes (bytes of a file so far) and the files it finished, written
// to the transfer at most a few times a second as one absolute count (bytes of
// complete items plus the notes of the others), so it never counts twice.
import { sql } from 'kysely';
import type { Db } from '../db/open.js';
import type { GatewaySession } from './session.js';
import { nowIso } from '../ids.js';

const EVERY_MS = 500;

export class TransferProgress {
  private readonly partial = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly unlisten: () => void;

  constructor(
    private readonly db: Db,
    private readonly transferId: string,
    session: GatewaySession,
  ) {
    this.unlisten = session.listenProgress((p) => {
      if (p.transfer_id !== this.transferId) return;
      this.partial.set(p.seq, p.bytes);
      this.schedule();
    });
  }

  /** The file is complete (its item says so): its note no longer counts. */
  done(seq: number): void {
    this.partial.delete(seq);
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write()).catch(() => undefined);
    }, EVERY_MS);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    const inFlight = [...this.partial.values()].reduce((a, b) => a + b, 0);
    const complete = sql<number>`(SELECT COALESCE(SUM(size), 0) FROM cloud_transfer_items WHERE transfer_id = ${this.transferId} AND state = 'complete')`;
    const files = sql<number>`(SELECT COUNT(*) FROM cloud_transfer_items WHERE transfer_id = ${this.transferId} AND state = 'complete')`;
    await this.db
      .updateTable('cloud_transfers')
      .set({ bytes_done: sql<number>`${complete} + ${inFlight}`, files_done: files, updated_at: nowIso() })
      .where('id', '=', this.transferId)
      .execute();
  }

  /** Stops listening and writes the count once more (the files complete so far). */
  async close(): Promise<void> {
    this.unlisten();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.partial.clear();
    await this.writing;
    await this.write();
  }
}
