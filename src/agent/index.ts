// Starts the local agent: state, scheduler, services, REST server; then resumes
// the transfers that were running when it last stopped (or crashed).
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { AgentConfig } from './config.js';
import type { AgentContext } from './context.js';
import { openAgentDb } from './store/db.js';
import { EventBus } from './events.js';
import { Scheduler } from './engine/scheduler.js';
import { Outages } from './engine/outages.js';
import { SleepWatch } from './engine/sleepWatch.js';
import { engineTuning } from './engine/retry.js';
import { createServices, type AgentServices } from './services/index.js';
import { buildAgentApp } from './server/app.js';

export interface RunningAgent {
  url: string;
  ctx: AgentContext;
  services: AgentServices;
  /** Resolves when POST /shutdown (or close) has stopped the agent. */
  stopped: Promise<void>;
  close(): Promise<void>;
}

export async function startAgent(config: AgentConfig, log: Logger = pino({ level: config.logLevel })): Promise<RunningAgent> {
  fs.mkdirSync(config.configDir, { recursive: true });
  const db = openAgentDb(path.join(config.configDir, 'agent.db'));
  const scheduler = new Scheduler(config.concurrency, (t, err) => log.warn({ err, transfer: t.id }, 'part task failed'));
  const tuning = engineTuning(process.env, config.retryForMs);
  const outages = new Outages(tuning.retry, log, tuning.timeoutMs);
  const sleep = new SleepWatch();
  const ctx: AgentContext = { config, db, events: new EventBus(), scheduler, outages, sleep, log };

  let closing: Promise<void> | undefined;
  let markStopped!: () => void;
  const stopped = new Promise<void>((r) => (markStopped = r));
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      sleep.stop();
      await outages.close();
      // Transfers keep their state: those that were running resume at the next start.
      await services.uploads.close();
      await services.downloads.close();
      await services.session.close();
      await db.shut();
      markStopped();
    })());

  const services = createServices(ctx, () => void close());
  const app = await buildAgentApp(ctx, services);
  try {
    // Retried in the background while the service cannot be reached; close() stops that.
    if (config.apiKey) await services.session.startWithApiKey(config.apiKey);
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await close();
    throw err;
  }
  services.uploads.resumeAll();
  services.downloads.resumeAll();
  sleep.start();
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { url: `http://${host}:${port}/api/v1`, ctx, services, stopped, close };
}
