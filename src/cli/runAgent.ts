// Runs the agent for its hosts (`ferry agent`, `ferry start`, the desktop app's
// agent process): the service on this computer first when the settings ask for
// it, the agent signed in as that service's owner when it has no session, and a
// new start after a change of settings that needs one.
import type { Logger } from 'pino';
import { resolveAgentConfig, type AgentFlags } from '../agent/config.js';
import { startAgent, type RunningAgent } from '../agent/index.js';
import type { ThisComputer } from './thisComputer.js';

export interface AgentRun {
  agent: RunningAgent;
  /** The service on this computer, when the agent uses it. */
  service: ThisComputer | undefined;
}

export interface RunOptions {
  /** `ferry agent`'s flags; the environment and config.yml add to them. */
  flags: AgentFlags;
  /** `ferry serve`'s flags for the service on this computer (its data dir, addresses). */
  serveFlags?: Record<string, string | boolean | undefined>;
  log: Logger;
}

/** One start; `service` is the one a previous start left running, kept when still wanted. */
export async function startAgentRun(o: RunOptions, service?: ThisComputer): Promise<AgentRun> {
  const config = resolveAgentConfig(o.flags);
  if (!config.thisComputer && service) {
    await service.close();
    service = undefined;
  }
  try {
    // Loaded only then: an agent on a server elsewhere carries none of the service's code.
    if (config.thisComputer) service ??= await (await import('./thisComputer.js')).startThisComputer(o.serveFlags ?? {}, o.log);
    const agent = await startAgent(service ? { ...config, hostedUrl: service.url } : config, o.log, { ownerKey: service?.ownerKey, storeUrl: service?.s3Url });
    if (service?.ownerKey && !config.apiKey && !agent.services.session.signedIn()) {
      await agent.services.session.loginWithApiKey(service.ownerKey).catch((err: unknown) => o.log.warn({ err }, 'could not sign in as the owner of the service on this computer'));
    }
    return { agent, service };
  } catch (err) {
    await service?.close();
    throw err;
  }
}

/**
 * Runs until `until` settles (a signal) or the agent shuts down (POST /shutdown),
 * starting it again after each change of settings that asks for it; answers why it stopped.
 */
export async function runAgent(o: RunOptions & { until: Promise<string>; started?(run: AgentRun): void }): Promise<string> {
  let service: ThisComputer | undefined;
  for (;;) {
    const run = await startAgentRun(o, service);
    service = run.service;
    o.started?.(run);
    const why = await Promise.race([o.until, run.agent.stopped]);
    if (why === 'restart') {
      o.log.info('starting the agent again with its new settings');
      continue;
    }
    const reason = why === 'shutdown' ? 'POST /shutdown' : why;
    o.log.info({ reason }, 'shutting down');
    await run.agent.close();
    await service?.close();
    return reason;
  }
}
