// Live delivery across instances on one PostgreSQL database: the writing
// transaction sends the event id with pg_notify (delivered at commit, so every
// instance that hears it reads a committed row), and each instance LISTENs on
// one connection of its own and wakes its streams. A notice lost while that
// connection is down costs only time: streams look again at every heartbeat,
// and the connection is opened again with back-off.
import pg from 'pg';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { inProcessNotifier, type EventNotifier } from './notifier.js';

const CHANNEL = 'ferry_events';
const MAX_BACKOFF_MS = 30_000;

export async function postgresNotifier(url: string, log: Logger): Promise<EventNotifier> {
  const local = inProcessNotifier();
  let client: pg.Client | undefined;
  let closed = false;
  let backoff = 500;
  let timer: NodeJS.Timeout | undefined;

  const listen = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (n) => {
      const id = Number(n.payload);
      if (n.channel === CHANNEL && Number.isSafeInteger(id)) local.wake(id);
    });
    c.on('error', (err) => {
      if (client === c) log.warn({ err }, 'event notices: the LISTEN connection failed; opening it again');
      lost(c);
    });
    c.on('end', () => lost(c));
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    if (closed) return void c.end().catch(() => undefined);
    client = c;
    backoff = 500;
  };
  const schedule = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      listen().catch((err: unknown) => {
        log.warn({ err }, 'event notices: cannot LISTEN yet');
        backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
        schedule();
      });
    }, backoff);
    timer.unref();
  };
  const lost = (c: pg.Client) => {
    if (client !== c) return;
    client = undefined;
    c.end().catch(() => undefined);
    schedule();
  };

  await listen();
  return {
    async raised(trx, id) {
      await sql`SELECT pg_notify(${CHANNEL}, ${String(id)})`.execute(trx);
    },
    subscribe: local.subscribe,
    listening: local.listening,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      local.close();
      client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
