// Waits for a transfer to reach an end state while showing its progress. It
// follows GET /events (a new summary at each change of state, the totals as
// they move: src/api/agent/transfers.ts) and falls back to
// polling every second when the stream is not available or ends. When the agent
// stops answering (stopped, or killed), the transfer is kept in its database and
// goes on when it starts again, so this waits for it, up to `lostMs`, and
// carries on following from the agent's record.
import type { AgentClient } from '../agentClient.js';
import { AgentRequestError, AgentUnreachableError } from '../agentClient.js';
import { ProgressBar, type ProgressOut } from '../progress.js';
import { Failure } from './common.js';
import type { Waiting } from '../../api/agent/waiting.js';
import type { StreamEvent } from '../../api/agent/events.js';
import type { Direction } from '../../api/agent/transfers.js';
import { keyOfChange, transferKey, withTotals } from '../../ipc/transfers.js';

interface Moving { progress: number; size: number; file_count: number; files_done: number; updated_at: string; state: string; waiting?: Waiting; queue_position?: number }

export interface FollowOptions<R extends Moving> {
  client: AgentClient;
  direction: Direction;
  id: string;
  get(): Promise<R>;
  isDone(r: R): boolean;
  out?: ProgressOut;
  pollMs?: number;
  /** Without events, how long to trust the stream before asking for the record anyway. */
  quietMs?: number;
  /** How long to wait for an agent that stopped answering before giving up (default 10 minutes). */
  lostMs?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or 'tick' after `ms`; the timer is cleared either way so it cannot hold the process open. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'tick'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<'tick'>((r) => (timer = setTimeout(() => r('tick'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export async function followTransfer<R extends Moving>(o: FollowOptions<R>): Promise<{ record: R; bar: ProgressBar }> {
  const bar = new ProgressBar({ label: `${o.direction} ${o.id}`, ttyLabel: o.direction, ...(o.out ? { out: o.out } : {}) });
  const pollMs = o.pollMs ?? 1000, quietMs = o.quietMs ?? 5000;
  const ac = new AbortController();
  // Ctrl-C stops the waiting, not the transfer: say so, and how to look later.
  const onSignal = () => {
    bar.finish(`stopped waiting; the ${o.direction} goes on in the agent (ferry ${o.direction}s get ${o.id})`);
    ac.abort();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);

  const fetchRecord = async (): Promise<R> => {
    try {
      return await o.get();
    } catch (err) {
      if (err instanceof AgentRequestError && err.status === 404) throw new Failure(`the ${o.direction} ${o.id} was removed`);
      throw err;
    }
  };
  // A transfer waiting its turn says so, and its place.
  const show = (r: R) => bar.update(r.progress, r.size, r.state === 'transferring' && r.queue_position !== undefined ? `queued (${r.queue_position})` : r.state, r.waiting);

  const lostMs = o.lostMs ?? 10 * 60_000;
  const lostFor = lostMs >= 60_000 ? `${Math.round(lostMs / 60_000)} min` : `${Math.round(lostMs / 1000)} s`;
  let lostSince: number | undefined;
  /** One look at the record; undefined while the agent does not answer. */
  const look = async (): Promise<R | undefined> => {
    try {
      const record = await fetchRecord();
      if (lostSince !== undefined) bar.note('the agent answers again');
      lostSince = undefined;
      return record;
    } catch (err) {
      if (!(err instanceof AgentUnreachableError)) throw err;
      const now = Date.now();
      if (lostSince === undefined) {
        lostSince = now;
        bar.note(`lost the agent at ${o.client.baseUrl}; the ${o.direction} is kept and goes on when the agent starts again. Waiting for it (up to ${lostFor}; Ctrl-C stops waiting)`);
      } else if (now - lostSince >= lostMs) {
        throw new Failure(`the agent did not answer for ${lostFor}; the ${o.direction} goes on when it starts again (ferry ${o.direction}s get ${o.id})`);
      }
      return undefined;
    }
  };

  type Events = AsyncIterator<StreamEvent>;
  const subscribe = async (): Promise<Events | undefined> => {
    try {
      return (await o.client.events({ types: [o.direction], signal: ac.signal }))[Symbol.asyncIterator]();
    } catch (err) {
      if (err instanceof AgentRequestError && err.status === 401) throw err;
      return undefined; // no event stream: poll
    }
  };

  /** Follows the stream to an end state; undefined when it ends, breaks, or the agent is lost. */
  const follow = async (stream: Events, current: R): Promise<R | undefined> => {
    let pending: Promise<IteratorResult<StreamEvent>> | undefined;
    let record = current;
    try {
      for (;;) {
        pending ??= stream.next();
        let next: IteratorResult<StreamEvent> | 'tick';
        try {
          next = await within(pending, quietMs);
        } catch {
          return undefined; // the stream broke (the agent stopped, say)
        }
        if (next === 'tick') {
          const seen = await look();
          if (!seen) return undefined;
          record = seen;
        } else {
          pending = undefined;
          if (next.done) return undefined;
          const e = next.value;
          if (e.type !== o.direction || keyOfChange(e) !== transferKey(o.direction, o.id)) continue;
          const d = e.data;
          if (d.change === 'removed') throw new Failure(`the ${o.direction} ${o.id} was removed`);
          if (d.change === 'record') record = ('upload' in d ? d.upload : d.download) as unknown as R;
          else if (d.change === 'progress') record = withTotals(record, d);
          else continue;
        }
        show(record);
        if (o.isDone(record)) return record;
      }
    } finally {
      // A stream left behind may still reject; nobody waits for it any more.
      pending?.catch(() => undefined);
    }
  };

  try {
    // Each turn subscribes, looks, and follows the stream; then polls until the
    // end, or until an agent that was lost answers again and can be subscribed to anew.
    for (;;) {
      const stream = await subscribe();
      // Subscribed before the look, so no change can fall between the two.
      const record = await look();
      if (record) {
        show(record);
        if (o.isDone(record)) return { record, bar };
        const done = stream && (await follow(stream, record));
        if (done) return { record: done, bar };
      }
      for (;;) {
        await sleep(pollMs);
        const wasLost = lostSince !== undefined;
        const seen = await look();
        if (!seen) continue;
        show(seen);
        if (o.isDone(seen)) return { record: seen, bar };
        if (wasLost) break;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    ac.abort();
  }
}
