// Starts the local agent: state, scheduler, services, REST server; then resumes
// the transfers that were running when it last stopped (or crashed).
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { AgentConfig } from './config.js';
import type { AgentContext } from './context.js';
import { openAgentDb } from './store/db.js';
import { EventBus } from './events.js';
import { queueRulesOf, Scheduler } from './engine/scheduler.js';
import { Outages } from './engine/outages.js';
import { SleepWatch } from './engine/sleepWatch.js';
import { Disks } from './engine/disks.js';
import { RateLimits } from './engine/rateLimits.js';
import type { Clock } from './engine/tokenBucket.js';
import { engineTuning } from './engine/retry.js';
import { createServices, type AgentServices, type StopReason } from './services/index.js';
import { buildAgentApp } from './server/app.js';
import { teeAgentLog } from './diagnostics/logTee.js';

export interface RunningAgent {
  /** The REST API's base address; undefined when the local API is off (the desktop app talks over IPC). */
  url: string | undefined;
  ctx: AgentContext;
  services: AgentServices;
  /**
   * Resolves once the agent has stopped: 'shutdown' after POST /shutdown or close(),
   * 'restart' after a change of settings that needs a new start (its host starts it again).
   */
  stopped: Promise<StopReason>;
  close(): Promise<void>;
}

export type { StopReason };

/** What the agent's host adds: the owner's key of the service it runs on this computer, if it runs one. */
export interface AgentHostInfo {
  ownerKey?: string;
  /** The S3 address of the store of the service on this computer, when the agent uses that service. */
  storeUrl?: string;
  /** The time the bandwidth limits and their schedules follow (tests give a fake one). */
  clock?: Clock;
}

export async function startAgent(config: AgentConfig, hostLog: Logger = pino({ level: config.logLevel }), hostInfo: AgentHostInfo = {}): Promise<RunningAgent> {
  fs.mkdirSync(config.configDir, { recursive: true });
  // The host's log, and the agent's own copy for diagnostics (the last problems, a rotating file).
  const { log, logs } = teeAgentLog(hostLog, path.join(config.configDir, 'logs'));
  const db = openAgentDb(path.join(config.configDir, 'agent.db'));
  const scheduler = new Scheduler(config.concurrency, (t, err) => log.warn({ err, transfer: t.id }, 'part task failed'), queueRulesOf(config));
  const tuning = engineTuning(process.env, config.retryForMs);
  const outages = new Outages(tuning.retry, log, tuning.timeoutMs);
  const sleep = new SleepWatch();
  const rates = new RateLimits(hostInfo.clock);
  rates.set(config.rates);
  const ctx: AgentContext = { config, db, events: new EventBus(), scheduler, outages, sleep, log, logs, disks: new Disks(db), rates, ownerKey: hostInfo.ownerKey, storeUrl: hostInfo.storeUrl };

  let closing: Promise<void> | undefined;
  let markStopped!: (why: StopReason) => void;
  const stopped = new Promise<StopReason>((r) => (markStopped = r));
  const close = (why: StopReason = 'shutdown') =>
    (closing ??= (async () => {
      await app.close();
      // Automations and gateways' sockets first: nothing new starts or arrives while the transfers stop.
      await services.automations.close();
      await services.gateways.close();
      sleep.stop();
      rates.close();
      await outages.close();
      // Transfers keep their state: those that were running resume at the next start.
      await services.uploads.close();
      await services.downloads.close();
      await services.session.close();
      await db.shut();
      logs.close();
      markStopped(why);
    })());

  const services = createServices(ctx, (why) => void close(why));
  const app = await buildAgentApp(ctx, services);
  try {
    // Retried in the background while the service cannot be reached; close() stops that.
    if (config.apiKey) await services.session.startWithApiKey(config.apiKey);
    if (config.localApi) await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await close();
    throw err;
  }
  services.uploads.resumeAll();
  services.downloads.resumeAll();
  services.automations.start();
  services.gateways.start();
  sleep.start();
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = config.localApi ? `http://${host}:${port}/api/v1` : undefined;
  return { url, ctx, services, stopped, close: () => close() };
}
