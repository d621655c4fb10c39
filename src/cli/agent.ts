// `ferry agent`: the local transfer agent, a REST server on localhost. Stops on
// SIGINT/SIGTERM and after POST /shutdown, exiting 0 either way.
import pino from 'pino';
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { resolveAgentConfig, type AgentConfig } from '../agent/config.js';
import { startAgent } from '../agent/index.js';

const HELP = `usage: ferry agent [options]

  --listen HOST:PORT        where the REST API listens (default 127.0.0.1:8080)
                            (an address other machines reach needs --api-key)
  --api-key KEY             an API key of the hosted service: requests must send it as
                            X-API-Key, and it signs the agent in (no "ferry login" needed)
  --config-dir DIR          transfers, session and config.yml (default: the OS's
                            application data folder, e.g. ~/.config/ferry/agent)
  --hosted-url URL          the hosted service (default http://127.0.0.1:7400)
  --auto-finalize true|false
                            send a Package once all its files are up (default true)
  --chunk-size BYTES        bytes per part of an upload (default 104857600)
  --concurrency N           parts in flight, uploads and downloads together (default 8;
                            many small files can go faster with more, e.g. 16)
  --retry-for DURATION      how long a transfer keeps retrying through an outage without
                            any success before it stops in error, e.g. 90s, 30m, 24h, 7d
                            (default 24h; it still resumes by itself once the service is back)
  --ui                      serve the app's window at the agent's address, for a browser
  --log-level LEVEL         trace, debug, info, warn, error, fatal or silent (default info)

Settings come from these flags, else FERRY_AGENT_<OPTION> in the environment
(e.g. FERRY_AGENT_LISTEN), else DIR/config.yml (e.g. "chunk_size: 52428800").`;

export const agentOptions = {
  listen: { type: 'string' },
  'api-key': { type: 'string' },
  'config-dir': { type: 'string' },
  'hosted-url': { type: 'string' },
  'auto-finalize': { type: 'string' },
  'chunk-size': { type: 'string' },
  concurrency: { type: 'string' },
  'retry-for': { type: 'string' },
  ui: { type: 'boolean' },
  'log-level': { type: 'string' },
} as const;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function configOf(args: string[]): AgentConfig {
  const { values } = parseFlags(args, agentOptions, HELP);
  const config = resolveAgentConfig(values);
  if (!LEVELS.includes(config.logLevel)) throw new Error(`--log-level must be one of ${LEVELS.join(', ')}, got "${config.logLevel}"`);
  try {
    new URL(config.hostedUrl);
  } catch {
    throw new Error(`--hosted-url must be a URL, got "${config.hostedUrl}"`);
  }
  return config;
}

export const agent: Command = {
  async run(args) {
    let config: AgentConfig;
    try {
      config = configOf(args);
    } catch (err) {
      console.error(`ferry agent: ${(err as Error).message}\nRun "ferry agent --help" for the options.`);
      return 2;
    }
    const log = pino({ level: config.logLevel });
    const running = await startAgent(config, log);
    const signalled = untilSignal(); // before the ready line, so a signal right after it is handled
    log.info({ url: running.url, configDir: config.configDir, hostedUrl: config.hostedUrl }, 'ferry agent ready');
    const reason = await Promise.race([signalled, running.stopped.then(() => 'POST /shutdown')]);
    log.info({ reason }, 'shutting down');
    await running.close();
    log.info('stopped');
    return 0;
  },
};
