// The supervisor's rules with a stand-in for the agent's process (its port is a
// pair of listeners): the back-off doubles to its cap and starts over after a
// healthy run; a request the agent never answered is answered when it dies; a
// request while it restarts waits for it; an exit to take new settings restarts at once.
import { afterEach, expect, test, vi } from 'vitest';
import { AgentSupervisor, type AgentChild } from '../../../main/supervisor.js';
import { RESTART_EXIT, type MainMessage } from '../../../src/ipc/port.js';

afterEach(() => vi.useRealTimers());

interface Fake extends AgentChild { toMain(m: unknown): void; fromMain: MainMessage[]; die(): void; exit(code: number): void }

function fakeChild(): Fake {
  const listeners = new Set<(m: unknown) => void>();
  const exits: ((code: number | null) => void)[] = [];
  const fromMain: MainMessage[] = [];
  return {
    fromMain,
    port: { post: (m) => void fromMain.push(m as MainMessage), onMessage: (l) => (listeners.add(l), () => listeners.delete(l)) },
    onExit: (l) => void exits.push(l),
    kill() { this.die(); },
    toMain: (m) => listeners.forEach((l) => l(m)),
    die: () => exits.splice(0).forEach((l) => l(null)),
    exit: (code) => exits.splice(0).forEach((l) => l(code)),
  };
}

test('restarts after 1 s, 2 s, 4 s... up to the cap, and from 1 s again after a healthy minute', () => {
  vi.useFakeTimers();
  const kids: Fake[] = [];
  const logs: string[] = [];
  const sup = new AgentSupervisor({ spawn: () => (kids.push(fakeChild()), kids.at(-1)!), maxDelayMs: 4000, onLog: (m) => logs.push(m) });
  sup.start();
  for (let i = 0; i < 4; i++) {
    kids.at(-1)!.die();
    vi.advanceTimersByTime(30_000);
  }
  expect(logs.map((l) => /in (\d+) ms/.exec(l)![1])).toEqual(['1000', '2000', '4000', '4000']);
  vi.advanceTimersByTime(61_000);
  kids.at(-1)!.die();
  expect(logs.at(-1)).toMatch(/in 1000 ms/);
  expect(kids).toHaveLength(5);
});

test('a request the agent never answered is answered when it dies; one made while it restarts waits for it', async () => {
  vi.useFakeTimers();
  const kids: Fake[] = [];
  const sup = new AgentSupervisor({ spawn: () => (kids.push(fakeChild()), kids.at(-1)!) });
  sup.start();
  kids[0]!.toMain({ kind: 'ready', url: 'http://127.0.0.1:1/api/v1' });
  const lost = sup.invoke('teams.list', {});
  kids[0]!.die();
  expect(await lost).toEqual({ ok: false, error: { code: 262144, message: 'The agent stopped before it answered; it is starting again.' } });
  expect(sup.state).toBe('reconnecting');

  const later = sup.invoke('teams.list', {});
  vi.advanceTimersByTime(1000);
  kids[1]!.toMain({ kind: 'ready', url: 'http://127.0.0.1:1/api/v1' });
  await vi.waitFor(() => expect(kids[1]!.fromMain).toHaveLength(1));
  const req = kids[1]!.fromMain[0] as Extract<MainMessage, { kind: 'request' }>;
  expect(req).toMatchObject({ kind: 'request', channel: 'teams.list' });
  kids[1]!.toMain({ kind: 'response', id: req.id, answer: { ok: true, value: [] } });
  expect(await later).toEqual({ ok: true, value: [] });
});

test('an agent that exits to take new settings is started again at once, without counting as a crash', () => {
  vi.useFakeTimers();
  const kids: Fake[] = [];
  const logs: string[] = [];
  const states: string[] = [];
  const sup = new AgentSupervisor({ spawn: () => (kids.push(fakeChild()), kids.at(-1)!), onLog: (m) => logs.push(m) });
  sup.onConnection((c) => states.push(c));
  sup.start();
  kids[0]!.toMain({ kind: 'ready', url: null });
  expect(sup.restUrl).toBeUndefined();
  expect(kids).toHaveLength(1);
  kids[0]!.exit(RESTART_EXIT);
  expect(kids).toHaveLength(2); // no timer: at once
  kids[1]!.toMain({ kind: 'ready', url: 'http://127.0.0.1:2/api/v1' });
  expect(states).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);
  expect(logs).toEqual(['the agent starts again with its new settings']);
  // A crash after that still starts the back-off from 1 s.
  kids[1]!.die();
  expect(logs.at(-1)).toMatch(/in 1000 ms/);
});
