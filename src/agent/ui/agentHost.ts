// Hosts a started agent behind a Port (the same src/agent as `ferry agent`):
// answers requests with the handler table, and pushes its events, coalesced at
// the source, to main. Main moves no bytes: it relays these messages.
import type { Logger } from 'pino';
import type { RunningAgent, StopReason } from '../index.js';
import { createHandlers, dispatch } from './handlers.js';
import { TransferCoalescer } from './coalesce.js';
import type { EventOf, TransferEvent } from '../../ipc/contract.js';
import type { MainMessage, Port } from '../../ipc/port.js';

export interface HostedAgent {
  agent: RunningAgent;
  /** Resolves once the agent has stopped (a shutdown message, close(), or to start again with new settings). */
  stopped: Promise<StopReason>;
  close(): Promise<void>;
}

export function hostAgent(port: Port, agent: RunningAgent, log: Logger): HostedAgent {
  const handlers = createHandlers(agent.services, agent.ctx);
  const coalescer = new TransferCoalescer((batch) => port.post({ kind: 'event', event: 'transfers.changed', payload: batch }));
  const unsubscribe = agent.ctx.events.subscribe((e) => {
    if (e.type === 'session') port.post({ kind: 'event', event: 'session.changed', payload: e.data as EventOf<'session.changed'> });
    else if (e.type === 'upload' || e.type === 'download') coalescer.push({ id: e.id, type: e.type, data: e.data } as TransferEvent);
    else if (e.type === 'automation') port.post({ kind: 'event', event: 'automations.changed', payload: e.data as EventOf<'automations.changed'> });
    else if (e.type === 'gateway') port.post({ kind: 'event', event: 'gateways.changed', payload: e.data as EventOf<'gateways.changed'> });
  });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      stopListening();
      unsubscribe();
      coalescer.close();
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
