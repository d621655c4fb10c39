// Everything a route or job needs, built once at start and passed down.
import type { Logger } from 'pino';
import type { HostedConfig, InstanceRole } from './config.js';
import type { Db } from './db/open.js';
import type { Tokens } from './auth/tokens.js';
import type { Storage } from './storage/s3.js';
import type { Mailer } from './mail/mailer.js';
import type { JobSignal } from './jobs/worker.js';
import type { Sealer } from './auth/sealed.js';
import type { GatewayHub } from './gateway/hub.js';
import type { EventNotifier } from './events/notifier.js';
import type { OutboundGuard } from './net/outbound.js';

export interface HostedContext {
  config: HostedConfig;
  db: Db;
  tokens: Tokens;
  storage: Storage;
  mailer: Mailer;
  log: Logger;
  /** Wakes this process's jobs worker after a commit that enqueued jobs. */
  jobs: JobSignal;
  /** Seals secrets the service must use again (cloud connections' credentials). */
  sealer: Sealer;
  /** The storage gateways whose sockets are attached to this process. */
  gateways: GatewayHub;
  /** Tells the open event streams of events raised (events/notifier.ts). */
  events: EventNotifier;
  /** Every connection made to a tenant-chosen address (webhooks, cloud connections) goes through it (net/outbound.ts). */
  outbound: OutboundGuard;
  /** This process: its role, and whether it is shutting down (/readyz then answers 503). */
  instance: InstanceState;
}

export interface InstanceState {
  role: InstanceRole;
  shuttingDown: boolean;
}
