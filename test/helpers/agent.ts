// Starts the local agent in-process against a test service, with a temporary
// config dir, on an ephemeral port. Call close() in afterAll.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { resolveAgentConfig, type AgentFlags } from '../../src/agent/config.js';
import { startAgent, type AgentHostInfo, type RunningAgent } from '../../src/agent/index.js';

export interface TestAgent {
  /** The agent's base URL, ending in /api/v1. */
  url: string;
  agent: RunningAgent;
  configDir: string;
  /** Stops the agent (if still running) and removes its config dir. */
  close(): Promise<void>;
}

export async function startTestAgent(svc: { url: string }, flags: AgentFlags = {}, host: AgentHostInfo = {}): Promise<TestAgent> {
  // A test may reuse another agent's config dir (a restart); otherwise each agent gets its own.
  const configDir = typeof flags['config-dir'] === 'string' ? flags['config-dir'] : await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-agent-'));
  const removeDir = () => fs.rm(configDir, { recursive: true, force: true });
  let agent: RunningAgent;
  try {
    const config = resolveAgentConfig({ listen: '127.0.0.1:0', 'hosted-url': svc.url, ...flags, 'config-dir': configDir }, {});
    agent = await startAgent(config, pino({ level: process.env.FERRY_TEST_LOG ?? 'silent' }), host);
  } catch (err) {
    // Tests of bad settings end here: leave no temp dir behind.
    await removeDir();
    throw err;
  }
  return {
    url: agent.url!,
    agent,
    configDir,
    async close() {
      await agent.close();
      await removeDir();
    },
  };
}

/** Signs the agent at `agentUrl` (ending in /api/v1) in as the service's first owner; throws unless 200. */
export async function signInAgent(agentUrl: string, svc: { owner: { email: string; password: string } }): Promise<void> {
  const r = await fetch(`${agentUrl}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: svc.owner.email, password: svc.owner.password }),
  });
  if (r.status !== 200) throw new Error(`agent login: ${r.status} ${await r.text()}`);
}

import { applyChange, keyOfChange, transferKey, type TransferSummary } from '../../src/ipc/transfers.js';
import type { TransferEvent } from '../../src/ipc/contract.js';

export interface SseMessage { id?: string; event: string; data: string; json: any }

export interface EventStream {
  status: number;
  headers: Headers;
  /** The next message that `match` accepts (earlier ones are skipped), or a rejection after `ms`. */
  next(match?: (m: SseMessage) => boolean, ms?: number): Promise<SseMessage>;
  /** Every message received so far. */
  received: SseMessage[];
  /** Resolves when the stream ends: true when the server ended it properly, false when it broke or was aborted. */
  ended: Promise<boolean>;
  /** Leaves: aborts the request. */
  close(): void;
}

/**
 * A transfer's summaries as the stream told them: each change after its first
 * record applied in order (src/ipc/transfers.ts, as the window does), one summary
 * per change; `removed` ends the list.
 */
export function summariesOf(received: SseMessage[], direction: 'upload' | 'download', id: string): TransferSummary[] {
  const out: TransferSummary[] = [];
  let now: TransferSummary | undefined;
  for (const m of received) {
    if (m.event !== direction || !m.json?.change) continue;
    const e = { id: Number(m.id), type: direction, data: m.json } as TransferEvent;
    if (keyOfChange(e) !== transferKey(direction, id)) continue;
    now = applyChange(now, e);
    if (now) out.push(now);
  }
  return out;
}

/** Whether a message is a change of this transfer (any kind). */
export const changeOf = (m: SseMessage, direction: 'upload' | 'download', id: string) =>
  m.event === direction && m.json?.change !== undefined && keyOfChange({ id: 0, type: direction, data: m.json } as TransferEvent) === transferKey(direction, id);

/** Opens GET {url}/events (plus `query`) with a real HTTP client and parses the SSE frames as they come. */
export async function openEventStream(url: string, opts: { headers?: Record<string, string>; query?: string } = {}): Promise<EventStream> {
  const ac = new AbortController();
  const res = await fetch(`${url}/events${opts.query ? `?${opts.query}` : ''}`, {
    headers: { accept: 'text/event-stream', ...opts.headers },
    signal: ac.signal,
  });
  const received: SseMessage[] = [];
  const waiters = new Set<() => void>();
  let endedFlag = false;
  const ended = (async () => {
    if (!res.body) return true;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const m: SseMessage = { event: 'message', data: '', json: undefined };
          let hasData = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'id') m.id = value;
            else if (field === 'event') m.event = value;
            else if (field === 'data') { m.data += (hasData ? '\n' : '') + value; hasData = true; }
          }
          if (!hasData) continue;
          try { m.json = JSON.parse(m.data); } catch { /* not JSON */ }
          received.push(m);
          for (const w of [...waiters]) w();
        }
      }
      return true;
    } catch {
      return false; // aborted by close(), or the connection broke
    } finally {
      endedFlag = true;
      for (const w of [...waiters]) w();
    }
  })();
  let seen = 0;
  return {
    status: res.status,
    headers: res.headers,
    received,
    ended,
    close: () => ac.abort(),
    next(match = () => true, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          while (seen < received.length) {
            const m = received[seen++]!;
            if (match(m)) { done(); return resolve(m); }
          }
          if (endedFlag) { done(); reject(new Error(`the event stream ended; received: ${JSON.stringify(received)}`)); }
        };
        const timer = setTimeout(() => { done(); reject(new Error(`no matching event within ${ms} ms; received: ${JSON.stringify(received)}`)); }, ms);
        const done = () => { clearTimeout(timer); waiters.delete(check); };
        waiters.add(check);
        check();
      });
    },
  };
}
