// Browser mode: requests as POST /ui/ipc/{channel}, events over the WebSocket
// /ui/events. A lost socket is opened again (1 s, doubling up to 10 s) after a
// fresh snapshot, and the connection reads "reconnecting" meanwhile.
import type { Answer, Channel, EventName, EventOf, RequestOf, ResponseOf } from '../../src/ipc/contract.js';
import type { Connection, Transport } from './types.js';
import { AgentErrorCode } from '../../src/api/agent/errors.js';


export function httpTransport(base = location.origin): Transport {
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const watchers = new Set<(c: Connection) => void>();
  let connection: Connection = 'connecting';
  let socket: WebSocket | undefined;
  let retry = 1000;

  const setConnection = (c: Connection) => {
    if (c === connection) return;
    connection = c;
    for (const w of watchers) w(c);
  };

  const again = (sync: () => Promise<number>) => {
    setConnection('reconnecting');
    setTimeout(() => void open(sync), retry);
    retry = Math.min(retry * 2, 10_000);
  };

  const open = async (sync: () => Promise<number>) => {
    let cursor: number;
    try {
      cursor = await sync();
    } catch {
      return again(sync);
    }
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/ui/events?since=${cursor}`);
    socket = ws;
    ws.onopen = () => {
      retry = 1000;
      setConnection('connected');
    };
    ws.onmessage = (m) => {
      const { event, payload } = JSON.parse(String(m.data)) as { event: string; payload: unknown };
      for (const l of listeners.get(event) ?? []) l(payload);
    };
    ws.onclose = () => {
      if (socket === ws) again(sync);
    };
  };

  const post = async <T>(url: string, body: unknown): Promise<Answer<T>> => {
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-ferry-ui': '1' },
        body: JSON.stringify(body ?? {}),
        credentials: 'same-origin',
      });
      const answer = (await r.json()) as Answer<T> | { code: number; message: string };
      if ('ok' in answer) return answer;
      return { ok: false, error: { code: answer.code, message: answer.message } };
    } catch {
      return { ok: false, error: { code: AgentErrorCode.internal, message: 'The agent cannot be reached. Is it running?' } };
    }
  };

  return {
    unlock: (apiKey) => post<{ done: true }>(`${base}/ui/unlock`, { api_key: apiKey }),
    invoke: <C extends Channel>(channel: C, request: RequestOf<C>) => post<ResponseOf<C>>(`${base}/ui/ipc/${channel}`, request),
    on<E extends EventName>(event: E, listener: (payload: EventOf<E>) => void) {
      const set = listeners.get(event) ?? new Set();
      set.add(listener as (p: unknown) => void);
      listeners.set(event, set);
      return () => set.delete(listener as (p: unknown) => void);
    },
    onConnection(listener) {
      watchers.add(listener);
      listener(connection);
      return () => watchers.delete(listener);
    },
    follow(sync) {
      socket?.close();
      void open(sync);
    },
  };
}
