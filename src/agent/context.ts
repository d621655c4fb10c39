// What the agent's services share: settings, state, the event feed, the scheduler.
import type { Logger } from 'pino';
import type { AgentConfig } from './config.js';
import type { AgentDb } from './store/db.js';
import type { EventBus } from './events.js';
import type { Scheduler } from './engine/scheduler.js';

export interface AgentContext {
  config: AgentConfig;
  db: AgentDb;
  events: EventBus;
  scheduler: Scheduler;
  log: Logger;
}
