// The CLI's agent client pieces that need no agent: the base URL rules, the SSE
// parser, and how a transfer is followed (events first, polling as the fallback).
import { describe, expect, test } from 'vitest';
import { AgentClient, AgentRequestError, AgentUnreachableError, agentBaseUrl, parseEventStream } from '../../../src/cli/agentClient.js';
import { followTransfer } from '../../../src/cli/transfers/follow.js';

describe('agentBaseUrl', () => {
  test('flag, then FERRY_AGENT_URL, then the default; /api/v1 is added to a bare origin', () => {
    expect(agentBaseUrl(undefined, {})).toBe('http://127.0.0.1:8080/api/v1');
    expect(agentBaseUrl(undefined, { FERRY_AGENT_URL: 'http://localhost:9000' })).toBe('http://localhost:9000/api/v1');
    expect(agentBaseUrl('http://127.0.0.1:1/api/v1/', { FERRY_AGENT_URL: 'http://localhost:9000' })).toBe('http://127.0.0.1:1/api/v1');
    expect(agentBaseUrl('http://[::1]:8080/', {})).toBe('http://[::1]:8080/api/v1');
  });

  test('refuses what is not an http(s) URL', () => {
    expect(() => agentBaseUrl('localhost:8080', {})).toThrow(/must start with http/);
    expect(() => agentBaseUrl('::', {})).toThrow(/is not a URL/);
  });
});

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

describe('parseEventStream', () => {
  test('frames split across chunks, CRLF, pings and multi-line data', async () => {
    const got = [];
    for await (const e of parseEventStream(chunks('retry: 2000\n\n: ping\n\nid: 1\nevent: up', 'load\ndata: {"a":1}\n\n', 'id: 2\r\nevent: download\r\ndata: line1\r\ndata: line2\r\n\r\n'))) got.push(e);
    expect(got).toEqual([
      { id: 1, type: 'upload', data: { a: 1 } },
      { id: 2, type: 'download', data: 'line1\nline2' },
    ]);
  });
});

interface Rec { upload_id: string; progress: number; size: number; file_count: number; files_done: number; updated_at: string; state: string }
const rec = (progress: number, state = 'transferring'): Rec => ({ upload_id: 'u1', progress, size: 100, file_count: 1, files_done: state === 'complete' ? 1 : 0, updated_at: 't', state });
/** The event of a new summary. */
const recordEvent = (id: number, r: Rec) => ({ id, type: 'upload', data: { change: 'record', upload: r } });
const quiet = { write: () => true, isTTY: false };

describe('followTransfer', () => {
  test('follows the summaries and totals the event stream brings, ignoring other transfers', async () => {
    let gets = 0;
    const client = {
      events: async () => (async function* () {
        yield recordEvent(1, { ...rec(10), upload_id: 'other', state: 'complete' });
        yield { id: 2, type: 'upload', data: { change: 'progress', upload_id: 'other', progress: 99, size: 100, file_count: 1, files_done: 0, updated_at: 't' } };
        yield { id: 3, type: 'upload', data: { change: 'progress', upload_id: 'u1', progress: 60, size: 100, file_count: 1, files_done: 0, updated_at: 't' } };
        yield recordEvent(4, rec(100, 'complete'));
      })(),
    } as unknown as AgentClient;
    const seen: number[] = [];
    const { record } = await followTransfer<Rec>({
      client, direction: 'upload', id: 'u1', out: quiet, pollMs: 1, quietMs: 60_000,
      get: async () => (gets++, rec(0)),
      isDone: (r) => (seen.push(r.progress), r.state === 'complete'),
    });
    expect(record).toEqual(rec(100, 'complete'));
    expect(seen).toEqual([0, 60, 100]); // the other transfer's changes never show
    expect(gets).toBe(1); // the first look only
  });

  test('polls when the event stream cannot be opened', async () => {
    const seq = [rec(0), rec(40), rec(80), rec(100, 'complete')];
    let gets = 0;
    const client = { events: async () => { throw new Error('no stream'); } } as unknown as AgentClient;
    const { record } = await followTransfer<Rec>({
      client, direction: 'upload', id: 'u1', out: quiet, pollMs: 1,
      get: async () => seq[Math.min(gets++, seq.length - 1)]!,
      isDone: (r) => r.state === 'complete',
    });
    expect(record.state).toBe('complete');
    expect(gets).toBe(4);
  });

  test('polls on when the stream ends early', async () => {
    const seq = [rec(0), rec(100, 'complete')];
    let gets = 0;
    const client = { events: async () => (async function* () {})() } as unknown as AgentClient;
    const { record } = await followTransfer<Rec>({
      client, direction: 'upload', id: 'u1', out: quiet, pollMs: 1,
      get: async () => seq[Math.min(gets++, seq.length - 1)]!,
      isDone: (r) => r.state === 'complete',
    });
    expect(record.state).toBe('complete');
  });

  test('a removed transfer is a failure, whether the event says so or the agent answers 404', async () => {
    const removedByEvent = { events: async () => (async function* () { yield { id: 1, type: 'upload', data: { change: 'removed', upload_id: 'u1' } }; })() } as unknown as AgentClient;
    await expect(followTransfer<Rec>({ client: removedByEvent, direction: 'upload', id: 'u1', out: quiet, get: async () => rec(0), isDone: () => false }))
      .rejects.toThrow(/upload u1 was removed/);
    const gone = { events: async () => { throw new Error('x'); } } as unknown as AgentClient;
    let gets = 0;
    await expect(followTransfer<Rec>({
      client: gone, direction: 'upload', id: 'u1', out: quiet, pollMs: 1, isDone: () => false,
      get: async () => { if (gets++ > 0) throw new AgentRequestError(404, 262149, 'upload not found'); return rec(0); },
    })).rejects.toThrow(/upload u1 was removed/);
  });
});

describe('followTransfer when the agent stops answering', () => {
  const unreachable = () => new AgentUnreachableError('cannot reach the agent');

  test('a broken stream and an agent that comes back: waits, says so, subscribes again, and follows on to the end', async () => {
    const lines: string[] = [];
    const out = { write: (s: string) => (lines.push(s), true), isTTY: false };
    // The first stream breaks as undici's does when the agent dies; the agent then misses
    // three looks and comes back, and the second stream brings the end.
    const streams = [
      async function* () {
        yield recordEvent(1, rec(30));
        throw new TypeError('terminated');
      },
      async function* () {
        yield recordEvent(9, rec(100, 'complete'));
      },
    ];
    let subscribed = 0;
    const client = { baseUrl: 'http://127.0.0.1:1/api/v1', events: async () => streams[subscribed++]!() } as unknown as AgentClient;
    const answers: (Rec | 'down')[] = [rec(0), 'down', 'down', 'down', rec(70), rec(80)];
    let gets = 0;
    const { record } = await followTransfer<Rec>({
      client, direction: 'upload', id: 'u1', out, pollMs: 1, quietMs: 60_000, lostMs: 60_000,
      get: async () => {
        const a = answers[gets++];
        if (a === undefined) throw new Error('looked once too often: the second stream has the end');
        if (a === 'down') throw unreachable();
        return a;
      },
      isDone: (r) => r.state === 'complete',
    });
    expect(record).toEqual(rec(100, 'complete'));
    expect(subscribed).toBe(2);
    expect(gets).toBe(6);
    const text = lines.join('');
    expect(text.match(/lost the agent at http:\/\/127\.0\.0\.1:1\/api\/v1; the upload is kept/g)).toHaveLength(1);
    expect(text).toContain('the agent answers again');
  });

  test('gives up after lostMs with a failure that says where the transfer is', async () => {
    const client = { events: async () => { throw unreachable(); } } as unknown as AgentClient;
    let gets = 0;
    await expect(followTransfer<Rec>({
      client, direction: 'download', id: 'd1', out: quiet, pollMs: 5, lostMs: 30, isDone: () => false,
      get: async () => { if (gets++ > 0) throw unreachable(); return { ...rec(0), upload_id: 'd1' }; },
    })).rejects.toThrow(/did not answer for .*the download goes on when it starts again \(ferry downloads get d1\)/);
    expect(gets).toBeGreaterThan(2);
  });
});
