// Hosts the agent behind a Port: starts it (the same src/agent as `ferry agent`),
// answers requests with the handler table, and pushes its events, coalesced at
// the source, to main. Main moves no bytes: it relays these messages.
import type { Logger } from 'pino';
import type { AgentConfig } from '../agent/config.js';
import { startAgent, type RunningAgent } from '../agent/index.js';
import { createHandlers, dispatch } from './handlers.js';
import { TransferCoalescer } from './coalesce.js';
import type { EventOf, TransferEvent } from './contract.js';
import type { MainMessage, Port } from './port.js';

export interface HostedAgent {
  agent: RunningAgent;
  /** Resolves once the agent has stopped (a shutdown message, or close()). */
  stopped: Promise<void>;
  close(): Promise<void>;
}

export async function hostAgent(port: Port, config: AgentConfig, log: Logger): Promise<HostedAgent> {
  let agent: RunningAgent;
  try {
    agent = await startAgent(config, log);
  } catch (err) {
    port.post({ kind: 'failed', message: (err as Error).message });
    throw err;
  }
  const handlers = createHandlers(agent.services, agent.ctx);
  const coalescer = new TransferCoalescer((batch) => port.post({ kind: 'event', event: 'transfers.changed', payload: batch }));
  const unsubscribe = agent.ctx.events.subscribe((e) => {
    if (e.type === 'session') port.post({ kind: 'event', event: 'session.changed', payload: e.data as EventOf<'session.changed'> });
    else coalescer.push({ id: e.id, type: e.type, data: e.data } as TransferEvent);
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

  port.post({ kind: 'ready', url: agent.url });
  return { agent, stopped: agent.stopped, close };
}
