// Hosts a started agent behind a Port (the same src/agent as `ferry agent`):
// answers requests with the handler table, and pushes its events (windowEvents.ts)
// to main. Main moves no bytes: it relays these messages.
import type { Logger } from 'pino';
import type { RunningAgent, StopReason } from '../index.js';
import { createHandlers, dispatch } from './handlers.js';
import { followForWindow } from './windowEvents.js';
import type { HostMessage, MainMessage, Port } from '../../ipc/port.js';

export interface HostedAgent {
  agent: RunningAgent;
  /** Resolves once the agent has stopped (a shutdown message, close(), or to start again with new settings). */
  stopped: Promise<StopReason>;
  close(): Promise<void>;
}

export function hostAgent(port: Port, agent: RunningAgent, log: Logger): HostedAgent {
  const handlers = createHandlers(agent.services, agent.ctx);
  const unsubscribe = followForWindow(agent.ctx.events, (event, payload) => port.post({ kind: 'event', event, payload } as HostMessage));

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      stopListening();
      unsubscribe();
      await agent.close();
    })());

  const stopListening = port.onMessage((raw) => {
    const m = raw as MainMessage;
    if (m?.kind === 'request' && typeof m.id === 'number' && typeof m.channel === 'string') {
      void dispatch(handlers, m.channel, m.payload, log).then((answer) => port.post({ kind: 'response', id: m.id, answer }));
    } else if (m?.kind === 'shutdown') void close();
  });

  port.post({ kind: 'ready', url: agent.url ?? null });
  return { agent, stopped: agent.stopped, close };
}
