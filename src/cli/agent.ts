// `ferry agent`: the local transfer agent, a REST server on localhost. Stops on
// SIGINT/SIGTERM and after POST /shutdown, exiting 0 either way.
import pino from 'pino';
import type { Command } from './command.js';
import { parseFlags, untilSignal } from './command.js';
import { resolveAgentConfig, type AgentConfig } from '../agent/config.js';
import { runAgent } from './runAgent.js';

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
  --fifo true|false         start transfers in the order they were made, a few at a time
                            (default false)
  --max-active-uploads N    uploads that run at once with --fifo (1-64, default 3)
  --max-active-downloads N  downloads that run at once with --fifo (1-64, default 3)
  --connections-per-transfer N
                            parts in flight of one transfer at most (1-64; default: no cap
                            but --concurrency)
  --retry-for DURATION      how long a transfer keeps retrying through an outage without
                            any success before it stops in error, e.g. 90s, 30m, 24h, 7d
                            (default 24h; it still resumes by itself once the service is back)
  --ui                      serve the app's window at the agent's address, for a browser
  --local-api true|false    listen for the REST API at all (default true)
  --local-api-key KEY       a key the REST API requires as X-API-Key, which signs nothing in
  --this-computer true|false
                            run the hosted service on this computer beside the agent and
                            sign in as its owner (its data in ferry serve's default data dir)
  --log-level LEVEL         trace, debug, info, warn, error, fatal or silent (default info)
  --upload-rate-limit RATE  bytes a second for all uploads together, e.g. 20MiB, 20MB (default none)
  --download-rate-limit RATE
                            bytes a second for all downloads together (default none)
  --rate-schedules JSON     limits at set hours, the first that holds wins, e.g.
                            '[{"days":["mon","tue","wed","thu","fri"],"start":"09:00","end":"18:00",
                            "upload_rate_limit":20971520,"download_rate_limit":0}]' (local time)
  --rate-limits-paused-until TIME
                            no limit holds until this ISO time ("Pause limits for an hour")

Settings come from these flags, else FERRY_AGENT_<OPTION> in the environment
(e.g. FERRY_AGENT_LISTEN), else DIR/config.yml (e.g. "chunk_size: 52428800"), which
the app's Settings screen and PATCH /settings write.`;

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
  'local-api': { type: 'string' },
  'local-api-key': { type: 'string' },
  'this-computer': { type: 'string' },
  'log-level': { type: 'string' },
  fifo: { type: 'string' },
  'max-active-uploads': { type: 'string' },
  'max-active-downloads': { type: 'string' },
  'connections-per-transfer': { type: 'string' },
  'upload-rate-limit': { type: 'string' },
  'download-rate-limit': { type: 'string' },
  'rate-schedules': { type: 'string' },
  'rate-limits-paused-until': { type: 'string' },
} as const;

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function configOf(args: string[]): AgentConfig {
  const { values } = parseFlags(args, agentOptions, HELP);
  const config = resolveAgentConfig(values);
  if (!LEVELS.includes(config.logLevel)) throw new Error(`--log-level must be one of ${LEVELS.join(', ')}, got "${config.logLevel}"`);
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
    const signalled = untilSignal(); // before the ready line, so a signal right after it is handled
    const reason = await runAgent({
      flags: config.flags,
      log,
      until: signalled,
      started: ({ agent }) => log.info({ url: agent.url ?? 'off', configDir: config.configDir, hostedUrl: agent.ctx.config.hostedUrl }, 'ferry agent ready'),
    });
    log.info({ reason }, 'stopped');
    // The agent is closed (its database too): work a request left behind (a file system
    // that never answers) must not keep the process alive. Unref'd: a clean exit is sooner.
    setTimeout(() => process.exit(0), 1000).unref();
    return 0;
  },
};
