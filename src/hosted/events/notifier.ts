// Live delivery of realtime events to the open streams. It carries ids only:
// a stream reads the rows themselves from the events table, so a listener that
// misses a notice loses nothing but time (streams also look again at every
// heartbeat). Behind this interface so that, with several instances of the
// service on one PostgreSQL database, the LISTEN/NOTIFY notifier (pgNotifier.ts)
// replaces the in-process one: `raised` is called inside the writing
// transaction, where pg_notify is delivered at commit.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Conn = Kysely<Database> | Transaction<Database>;

export interface EventListener {
  /** An event with this id (or a later one) may be there to read. */
  event(id: number): void;
  /** The service is stopping: end the stream. */
  close(): void;
}

export interface EventNotifier {
  /** Called in the transaction that wrote event `id` (pgNotifier.ts sends it with pg_notify there). */
  raised(trx: Conn, id: number): void | Promise<void>;
  /** Answers the unsubscribe. */
  subscribe(listener: EventListener): () => void;
  /** Closes every listener; later subscribers are closed at once. */
  close(): void;
  /** How many listeners (open streams) this process has. */
  listening(): number;
}

/**
 * One process. Listeners are told on the next turn of the event loop: with
 * SQLite every query goes through Kysely's one connection, so a listener's read
 * waits for the writing transaction to commit (or roll back: it then finds nothing).
 * On PostgreSQL the read waits for the event writers in flight instead
 * (afterEventWriters in db/dialect.ts).
 */
export function inProcessNotifier(): EventNotifier & { wake(id: number): void } {
  const listeners = new Set<EventListener>();
  let closed = false;
  let pending = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const id = pending;
    for (const l of listeners) l.event(id);
  };
  const wake = (id: number) => {
    if (closed) return;
    pending = Math.max(pending, id);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return {
    raised: (_trx, id) => wake(id),
    wake,
    subscribe(listener) {
      if (closed) {
        listener.close();
        return () => undefined;
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listening: () => listeners.size,
    close() {
      closed = true;
      for (const l of [...listeners]) l.close();
      listeners.clear();
    },
  };
}
