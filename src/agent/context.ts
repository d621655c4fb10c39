// What the agent's services share: settings, state, the event feed, the scheduler,
// the reachability of the service and the stores.
import type { Logger } from 'pino';
import type { AgentConfig } from './config.js';
import type { AgentDb } from './store/db.js';
import type { EventBus } from './events.js';
import type { Scheduler } from './engine/scheduler.js';
import type { Outages } from './engine/outages.js';
import type { SleepWatch } from './engine/sleepWatch.js';
import type { AgentLogs } from './diagnostics/logTee.js';
import type { Disks } from './engine/disks.js';
import type { RateLimits } from './engine/rateLimits.js';

export interface AgentContext {
  config: AgentConfig;
  db: AgentDb;
  events: EventBus;
  scheduler: Scheduler;
  /** The service and the stores as reachable or down, each probed once during an outage. */
  outages: Outages;
  /** Hears of the machine waking from sleep. */
  sleep: SleepWatch;
  log: Logger;
  /** The agent's own copy of its log: the last problems and the log files (diagnostics). */
  logs: AgentLogs;
  /** The disks files are read from and written to, each with its reader and writer slots. */
  disks: Disks;
  /** The bandwidth limits: one token bucket per direction, shared by every transfer. */
  rates: RateLimits;
  /** The API key of the owner of the service on this computer, when the agent uses that service ("Try it on this computer"). */
  ownerKey?: string;
  /** The store of the service on this computer (its S3 address), when the agent uses that service. */
  storeUrl?: string;
}
