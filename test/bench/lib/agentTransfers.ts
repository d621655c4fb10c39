// One upload or download of a whole dataset through the agent's REST API, as
// the dataset benchmark drives it: started, then followed on `GET /events`
// (whose bytes are counted) with a slow poll of the record's summary as a
// fallback, so that waiting costs the agent next to nothing at any file count.
import { call } from '../../helpers/hosted.js';
import { followEvents, stateIn, timedGet, type EventMeter, type Timed } from './agentMeters.js';

export type Kind = 'uploads' | 'downloads';

/** How often the record is read while waiting, in case the events said nothing. */
const POLL_MS = 10_000;

/** The agent's event stream, with the last state and progress each transfer reported. */
export interface Follower {
  meter: EventMeter;
  states: Map<string, string>;
  /** The last `progress / size` each transfer reported (0..1). */
  done: Map<string, number>;
  /** Resolves when a message about `id` arrives (or after `ms`). */
  nudge(ms: number): Promise<void>;
}

export async function followAgent(agentUrl: string): Promise<Follower> {
  const states = new Map<string, string>();
  const done = new Map<string, number>();
  let wake: (() => void) | undefined;
  const meter = await followEvents(agentUrl, (data) => {
    const s = stateIn(data);
    const d = data as Record<string, any>;
    const rec = d?.upload ?? d?.download ?? d;
    const id = s?.id ?? rec?.upload_id ?? rec?.download_id;
    if (s) states.set(s.id, s.state);
    if (typeof id === 'string' && typeof rec?.progress === 'number' && rec.size > 0) done.set(id, rec.progress / rec.size);
    if (id !== undefined) wake?.();
  });
  return {
    meter, states, done,
    nudge: (ms) => new Promise<void>((ok) => {
      const t = setTimeout(() => ok(), ms);
      wake = () => { clearTimeout(t); ok(); };
    }),
  };
}

/** The record's summary: `?files=false` (its whole file list where the agent does not know the flag). */
export async function summary(agentUrl: string, kind: Kind, id: string): Promise<Record<string, any>> {
  const r = await call(agentUrl, 'GET', `/${kind}/${id}?files=false`);
  if (r.status !== 200) throw new Error(`GET /${kind}/${id}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, any>;
}

/** Waits for `id` to reach a state in `until` (or `error`, which throws); gives up after `limitMs`. */
export async function waitFor(agentUrl: string, f: Follower, kind: Kind, id: string, until: string[], limitMs: number): Promise<Record<string, any>> {
  const end = performance.now() + limitMs;
  let polled = 0;
  while (performance.now() < end) {
    const heard = f.states.get(id);
    if ((heard !== undefined && (until.includes(heard) || heard === 'error')) || performance.now() - polled >= POLL_MS) {
      polled = performance.now();
      const r = await summary(agentUrl, kind, id);
      if (r.state === 'error') throw new Error(`${kind} ${id} failed: ${r.error ?? 'no message'}`);
      if (until.includes(r.state)) return r;
      f.states.set(id, r.state);
    }
    await f.nudge(Math.min(POLL_MS, Math.max(0, end - performance.now())));
  }
  throw new Error(`${kind} ${id} not ${until.join(' or ')} within ${limitMs} ms`);
}

/** Waits until `id` has moved at least `share` of its bytes; gives up after `limitMs`. */
export async function waitShare(f: Follower, id: string, share: number, limitMs: number): Promise<void> {
  const end = performance.now() + limitMs;
  while ((f.done.get(id) ?? 0) < share) {
    if (performance.now() >= end) throw new Error(`${id} not at ${share * 100}% within ${limitMs} ms`);
    await f.nudge(1000);
  }
}

export interface ListCall { call: string; status: number; bytes: number; ms: number; firstMs: number }

/** Times the list calls a client makes of a transfer and of all of them: whole records, summaries, a page of files. */
export async function listCalls(agentUrl: string, kind: Kind, id: string): Promise<ListCall[]> {
  const out: ListCall[] = [];
  // Summaries and a page first: after a whole record of many files, the agent's GC of it lands in the next call.
  for (const path of [`/${kind}/${id}?files=false`, `/${kind}?files=false`, `/${kind}/${id}/files?limit=500`, `/${kind}/${id}`, `/${kind}`]) {
    const r: Timed = await timedGet(`${agentUrl}${path}`);
    out.push({ call: `GET ${path.replace(id, '{id}')}`, status: r.status, bytes: r.bytes, ms: r.ms, firstMs: r.firstMs });
  }
  return out;
}
