// The agent's settings as the app edits them (GET/PATCH /settings, the Settings
// screen). They live in config.yml, below flags and the environment: a setting
// given by either is shown locked with why. Transfer settings apply at once;
// those of the connections (the server, the REST API) need the agent to start
// again, which it does right after answering. A new server ends the session.
import net from 'node:net';
import type { AgentContext } from '../context.js';
import { readConfigFile, resolveAgentConfig, writeConfigFile, type AgentConfig, type ConfigFile, type ConfigKey } from '../config.js';
import type { AgentSettings, SettingsAnswer, SettingsChange, ThisComputerAnswer } from '../../api/agent/settings.js';
import { conflict, invalid } from '../errors.js';
import type { SessionService } from './session.js';
import { queueRulesOf } from '../engine/scheduler.js';
import { scheduleProblem } from '../../format/rateSchedule.js';

/** Each setting of the wire and its key in config.yml and the flags. */
const KEYS = {
  hosted_url: 'hosted-url',
  this_computer: 'this-computer',
  concurrency: 'concurrency',
  chunk_size: 'chunk-size',
  auto_finalize: 'auto-finalize',
  local_api: 'local-api',
  listen: 'listen',
  local_api_key: 'local-api-key',
  fifo: 'fifo',
  max_active_uploads: 'max-active-uploads',
  max_active_downloads: 'max-active-downloads',
  connections_per_transfer: 'connections-per-transfer',
  // Bandwidth limits (engine/rateLimits.ts).
  upload_rate_limit: 'upload-rate-limit',
  download_rate_limit: 'download-rate-limit',
  rate_schedules: 'rate-schedules',
  rate_limits_paused_until: 'rate-limits-paused-until',
} as const satisfies Record<keyof SettingsChange, ConfigKey>;

type Name = keyof typeof KEYS;
/** Each setting as the app names it, for the messages people read. */
const LABELS: Record<Name, string> = {
  hosted_url: 'The server',
  this_computer: 'The service on this computer',
  concurrency: 'Concurrency',
  chunk_size: 'The chunk size',
  auto_finalize: 'Auto-finalize',
  local_api: 'The local API',
  listen: 'The local API address',
  local_api_key: 'The local API key',
  fifo: 'FIFO mode',
  max_active_uploads: 'Uploads at once',
  max_active_downloads: 'Downloads at once',
  connections_per_transfer: 'Connections per transfer',
  upload_rate_limit: 'The upload limit',
  download_rate_limit: 'The download limit',
  rate_schedules: 'The limit schedules',
  rate_limits_paused_until: 'The pause of the limits',
};
const NEED_RESTART: readonly Name[] = ['hosted_url', 'this_computer', 'local_api', 'listen', 'local_api_key'];

/** Answers once the address can be listened on (then freed), or why not. */
function canListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' ? `${host}:${port} is in use` : `cannot listen on ${host}:${port}: ${err.message}`));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(undefined)));
  });
}

export function createSettingsService(ctx: AgentContext, session: SessionService, restart: () => void) {
  const config = ctx.config;

  /** Why another server is refused, in words: the server in use and what fixed it. */
  const otherServerRefused = (why: string) =>
    `This agent signs in only to ${config.thisComputer ? 'the service on this computer' : config.hostedUrl} (${why}). Sign in there, or start the agent without that setting to use another server.`;

  /** Why a setting cannot be changed from here, if it cannot. */
  function lockOf(name: Name): string | undefined {
    const key = KEYS[name];
    const source = config.sources[key];
    if (source === 'flag') return `set by --${key} where the agent was started`;
    if (source === 'env') return `set by FERRY_AGENT_${key.replace(/-/g, '_').toUpperCase()}`;
    if (config.ui && (name === 'listen' || name === 'local_api')) return 'this page is served through the local API';
    if (name === 'hosted_url' && config.thisComputer) return 'the service on this computer';
    return undefined;
  }

  function get(): AgentSettings {
    const locked: Record<string, string> = {};
    for (const name of Object.keys(KEYS) as Name[]) {
      const why = lockOf(name);
      if (why) locked[name] = why;
    }
    const values = Object.fromEntries((Object.keys(KEYS) as Name[]).map((n) => [n, valueOf(config, n)]));
    return { ...values, locked, rate_limits_now: limitsNow(ctx) } as AgentSettings;
  }

  const service = {
    get,

    /** "Try it on this computer". */
    async useThisComputer(): Promise<ThisComputerAnswer> {
      if (!config.thisComputer) return { restarting: (await service.update({ this_computer: true })).restarting, session: null };
      if (!ctx.ownerKey) throw conflict('the key of the owner of the service on this computer is not in its first-owner.txt: sign in with their e-mail and password');
      return { restarting: false, session: await session.loginWithApiKey(ctx.ownerKey) };
    },

    async update(change: SettingsChange): Promise<SettingsAnswer> {
      // A server given alone is a server elsewhere (this computer's service is left), unless it is the server in use.
      const sameServer = change.hosted_url !== undefined && change.hosted_url.replace(/\/+$/, '') === config.hostedUrl.replace(/\/+$/, '');
      if (change.hosted_url !== undefined && !sameServer && change.this_computer === undefined && config.thisComputer) {
        change = { ...change, this_computer: false };
      }
      const names = (Object.keys(change) as Name[]).filter((n) => change[n] !== undefined);
      if (names.length === 0) throw invalid(`give at least one of the settings: ${Object.keys(KEYS).join(', ')}`);
      // What the schema cannot say of a schedule (a start equal to its end), in words.
      change.rate_schedules?.forEach((sched, i) => {
        const problem = scheduleProblem(sched, `Schedule ${i + 1}`);
        if (problem) throw invalid(problem, `rate_schedules/${i}`);
      });
      // A setting given its current value changes nothing, fixed or not: signing in again to the same server is no move.
      const same = (n: Name) => (n === 'hosted_url' ? sameServer : JSON.stringify(change[n]) === JSON.stringify(valueOf(config, n)));
      for (const n of names) {
        if (same(n)) continue;
        const leaving = n === 'hosted_url' && change.this_computer === false;
        const why = leaving ? lockOf('this_computer') : lockOf(n);
        if (why) throw conflict(n === 'hosted_url' ? otherServerRefused(why) : `${LABELS[n]} cannot be changed here: it is ${why}.`);
      }
      const file: ConfigFile = readConfigFile(config.configDir);
      for (const n of names) {
        if (same(n)) continue; // nothing to write (and a fixed setting is not copied into config.yml)
        const v = change[n];
        file[KEYS[n]] = v === null ? undefined : Array.isArray(v) ? v : String(v);
      }
      let next: AgentConfig;
      try {
        next = resolveAgentConfig(config.flags, process.env, file);
      } catch (err) {
        throw invalid((err as Error).message);
      }
      const changed = names.filter((n) => !same(n) && JSON.stringify(valueOf(next, n)) !== JSON.stringify(valueOf(config, n)));
      const restarting = changed.some((n) => NEED_RESTART.includes(n));
      if (next.localApi && (changed.includes('listen') || changed.includes('local_api'))) {
        const busy = await canListen(next.host, next.port);
        if (busy) throw invalid(busy);
      }
      writeConfigFile(config.configDir, file);
      // What transfers use is read when it is needed: these hold from the next part or upload on.
      config.concurrency = next.concurrency;
      config.chunkSize = next.chunkSize;
      config.autoFinalize = next.autoFinalize;
      config.rates = next.rates;
      ctx.rates.set(next.rates);
      ctx.scheduler.setLimit(next.concurrency);
      Object.assign(config, pickQueue(next));
      ctx.scheduler.setRules(queueRulesOf(config));
      ctx.log.info({ changed }, 'settings changed');
      // A session belongs to its server.
      if (changed.includes('hosted_url') || changed.includes('this_computer')) session.logout();
      const answer = { settings: get(), restarting };
      if (restarting) {
        Object.assign(answer.settings, Object.fromEntries(changed.map((n) => [n, valueOf(next, n)])));
        // After the answer has left: over HTTP and IPC alike it is written within this delay.
        setTimeout(restart, 200).unref();
      }
      return answer;
    },
  };
  return service;
}

function valueOf(c: AgentConfig, n: Name): unknown {
  switch (n) {
    case 'hosted_url': return c.hostedUrl;
    case 'this_computer': return c.thisComputer;
    case 'concurrency': return c.concurrency;
    case 'chunk_size': return c.chunkSize;
    case 'auto_finalize': return c.autoFinalize;
    case 'local_api': return c.localApi;
    case 'listen': return `${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`;
    case 'local_api_key': return c.localApiKey ?? null;
    case 'fifo': return c.fifo;
    case 'max_active_uploads': return c.maxActiveUploads;
    case 'max_active_downloads': return c.maxActiveDownloads;
    case 'connections_per_transfer': return c.connectionsPerTransfer ?? null;
    case 'upload_rate_limit':
    case 'download_rate_limit':
    case 'rate_schedules':
    case 'rate_limits_paused_until':
      return c.rates[n];
  }
}

/** The queueing settings, which hold at once (the scheduler takes them). */
const pickQueue = ({ fifo, maxActiveUploads, maxActiveDownloads, connectionsPerTransfer }: AgentConfig) => ({ fifo, maxActiveUploads, maxActiveDownloads, connectionsPerTransfer });

/** The limits in force now, as GET /settings shows them. */
function limitsNow(ctx: AgentContext): AgentSettings['rate_limits_now'] {
  const s = ctx.rates.state();
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return { upload_rate_limit: s.upload, download_rate_limit: s.download, until: iso(s.until), paused_until: iso(s.pausedUntil) };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
