// The agent's settings: flags win over FERRY_AGENT_* environment variables,
// which win over `config.yml` in the config dir. Free of I/O except reading that file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseRate, scheduleProblem, type RateSchedule, type RateSettings } from '../format/rateSchedule.js';


export interface AgentConfig {
  /** A key of the hosted service: it signs the agent in, and requests to the REST API must send it. */
  apiKey?: string;
  /** A key only for the REST API (the app's Settings make one): requests send it, and it signs nothing in. Wins over apiKey there. */
  localApiKey?: string;
  host: string;
  port: number;
  configDir: string;
  autoFinalize: boolean;
  chunkSize: number;
  hostedUrl: string;
  concurrency: number;
  /** How long a transfer goes on retrying without a success before it stops in a recoverable error. */
  retryForMs: number;
  /** FIFO mode: transfers start in the order they were made, at most maxActiveUploads / maxActiveDownloads at once. */
  fifo: boolean;
  maxActiveUploads: number;
  maxActiveDownloads: number;
  /** Parts in flight of one transfer at most; undefined for no cap but `concurrency`. */
  connectionsPerTransfer: number | undefined;
  /** Serve the app's window at the agent's address (browser mode). */
  ui: boolean;
  /** Listen for the REST API at all: the desktop app can turn it off (it talks to the agent over IPC). */
  localApi: boolean;
  /** Run a hosted service on this machine and use it ("Try it on this computer"): the host starts it (cli/thisComputer.ts). */
  thisComputer: boolean;
  logLevel: string;
  /** Bandwidth limits, their schedules and their pause (engine/rateLimits.ts). */
  rates: RateSettings;
  /** Where each setting came from: one set by a flag or the environment cannot be changed from the app. */
  sources: Record<ConfigKey, SettingSource>;
  /** The flags this was resolved from, to resolve it again after a change of config.yml. */
  flags: AgentFlags;
}

export type SettingSource = 'flag' | 'env' | 'file' | 'default';

/** The key requests to the REST API must send, if any. */
export const restKey = (c: Pick<AgentConfig, 'apiKey' | 'localApiKey'>): string | undefined => c.localApiKey ?? c.apiKey;

export type AgentFlags = Record<string, string | boolean | undefined>;

export const DEFAULT_CHUNK_SIZE = 100 * 1024 * 1024;
export const DEFAULT_RETRY_FOR_MS = 24 * 3600 * 1000;
/** Transfers of a direction that run at once in FIFO mode, unless set. */
export const DEFAULT_MAX_ACTIVE = 3;

/** The OS's place for application data. */
export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (platform === 'win32') return path.join(env.APPDATA || path.join(os.homedir(), 'AppData', 'Roaming'), 'Ferry', 'agent');
  if (platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Ferry', 'agent');
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'ferry', 'agent');
}

const KEYS = ['api-key', 'listen', 'auto-finalize', 'chunk-size', 'hosted-url', 'concurrency', 'retry-for', 'ui', 'local-api', 'local-api-key', 'this-computer', 'log-level',
  'fifo', 'max-active-uploads', 'max-active-downloads', 'connections-per-transfer',
  'upload-rate-limit', 'download-rate-limit', 'rate-schedules', 'rate-limits-paused-until'] as const;
export type ConfigKey = (typeof KEYS)[number];

/** Each setting as text, except a list (rate-schedules), kept as a YAML list in the file and given as JSON to a flag or variable. */
export type ConfigFile = Partial<Record<ConfigKey, string | unknown[]>>;

const configFile = (configDir: string) => path.join(configDir, 'config.yml');

export function readConfigFile(configDir: string): ConfigFile {
  const file = configFile(configDir);
  if (!fs.existsSync(file)) return {};
  const doc = parseYaml(fs.readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (doc !== null && (typeof doc !== 'object' || Array.isArray(doc))) throw new Error(`${file} must be a mapping of settings`);
  const out: ConfigFile = {};
  for (const [k, v] of Object.entries(doc ?? {})) {
    const key = k.replace(/_/g, '-');
    if (!(KEYS as readonly string[]).includes(key)) throw new Error(`${file}: unknown setting "${k}"`);
    if (v !== null) out[key as ConfigKey] = Array.isArray(v) ? v : String(v);
  }
  return out;
}

/**
 * Writes config.yml (snake_case keys, as a person writes it) through a temporary file and a
 * rename, so a crash leaves the old file or the new one; readable by the user only, since
 * it may hold the API key.
 */
export function writeConfigFile(configDir: string, values: ConfigFile): void {
  const lines = Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) =>
      Array.isArray(v)
        ? v.length === 0 ? `${k.replace(/-/g, '_')}: []` : stringifyYaml({ [k.replace(/-/g, '_')]: v }).trimEnd()
        : `${k.replace(/-/g, '_')}: ${JSON.stringify(/^(true|false|\d+)$/.test(v!) ? JSON.parse(v!) : v)}`,
    );
  fs.mkdirSync(configDir, { recursive: true });
  const tmp = `${configFile(configDir)}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `# The agent's settings (ferry agent --help); the app's Settings screen writes this file.\n${lines.join('\n')}\n`, { mode: 0o600 });
  fs.renameSync(tmp, configFile(configDir));
}

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function int(v: string, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${what} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration: `90s`, `30m`, `24h`, `7d`, `500ms`, or a number of seconds. At least one second. */
export function duration(v: string, what: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$/.exec(v);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] ?? 's']! : NaN;
  if (!Number.isFinite(ms) || ms < 1000 || ms > 365 * 86_400_000) throw new Error(`${what} must be a duration from 1s to 365d (e.g. 90s, 30m, 24h), got "${v}"`);
  return Math.round(ms);
}

function bool(v: string, what: string): boolean {
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new Error(`${what} must be true or false, got "${v}"`);
}

/** The settings from the flags, else the environment, else config.yml (or `file` in its place), else the defaults. */
export function resolveAgentConfig(flags: AgentFlags, env: NodeJS.ProcessEnv = process.env, file?: ConfigFile): AgentConfig {
  const flag = (k: string) => (typeof flags[k] === 'boolean' ? String(flags[k]) : (flags[k] as string | undefined));
  const envOf = (k: string) => env[`FERRY_AGENT_${k.replace(/-/g, '_').toUpperCase()}`] || undefined;
  const configDir = path.resolve(flag('config-dir') ?? envOf('config-dir') ?? defaultConfigDir(env));
  const inFile = file ?? readConfigFile(configDir);
  const fromFile = (k: ConfigKey) => {
    const v = inFile[k];
    return Array.isArray(v) ? JSON.stringify(v) : v;
  };
  const get = (k: ConfigKey) => flag(k) ?? envOf(k) ?? fromFile(k);
  const sources = Object.fromEntries(
    KEYS.map((k): [ConfigKey, SettingSource] => [k, flag(k) !== undefined ? 'flag' : envOf(k) !== undefined ? 'env' : inFile[k] !== undefined ? 'file' : 'default']),
  ) as Record<ConfigKey, SettingSource>;

  const listen = get('listen') ?? '127.0.0.1:8080';
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  if (!m) throw new Error(`--listen must be HOST:PORT, got "${listen}"`);
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const apiKey = get('api-key');
  const localApiKey = get('local-api-key');
  // The Host and Origin checks stop web pages, not programs: any program that reaches
  // the port could send this machine's files anywhere, so only loopback goes without a key.
  if (!apiKey && !localApiKey && !isLoopback(host)) throw new Error(`--listen ${listen} is reachable from other machines: it needs --api-key`);
  const hostedUrl = (get('hosted-url') ?? 'http://127.0.0.1:7400').replace(/\/+$/, '');
  if (!URL.canParse(hostedUrl) || !/^https?:$/.test(new URL(hostedUrl).protocol)) throw new Error(`--hosted-url must be an http(s) URL, got "${hostedUrl}"`);
  const localApi = get('local-api') === undefined ? true : bool(get('local-api')!, '--local-api');
  const ui = get('ui') === undefined ? false : bool(get('ui')!, '--ui');
  if (ui && !localApi) throw new Error('--ui serves the app at the local API\'s address: it needs --local-api true');
  return {
    apiKey,
    localApiKey,
    host,
    port: int(m[2]!, '--listen port', 0, 65535),
    configDir,
    autoFinalize: get('auto-finalize') === undefined ? true : bool(get('auto-finalize')!, '--auto-finalize'),
    chunkSize: get('chunk-size') === undefined ? DEFAULT_CHUNK_SIZE : int(get('chunk-size')!, '--chunk-size', 5 * 1024 * 1024, 5 * 1024 ** 3),
    hostedUrl,
    concurrency: get('concurrency') === undefined ? 8 : int(get('concurrency')!, '--concurrency', 1, 64),
    retryForMs: get('retry-for') === undefined ? DEFAULT_RETRY_FOR_MS : duration(get('retry-for')!, '--retry-for'),
    ui,
    localApi,
    thisComputer: get('this-computer') === undefined ? false : bool(get('this-computer')!, '--this-computer'),
    logLevel: get('log-level') ?? 'info',
    fifo: get('fifo') === undefined ? false : bool(get('fifo')!, '--fifo'),
    maxActiveUploads: get('max-active-uploads') === undefined ? DEFAULT_MAX_ACTIVE : int(get('max-active-uploads')!, '--max-active-uploads', 1, 64),
    maxActiveDownloads: get('max-active-downloads') === undefined ? DEFAULT_MAX_ACTIVE : int(get('max-active-downloads')!, '--max-active-downloads', 1, 64),
    connectionsPerTransfer: get('connections-per-transfer') === undefined ? undefined : int(get('connections-per-transfer')!, '--connections-per-transfer', 1, 64),
    rates: {
      upload_rate_limit: rateOf(get('upload-rate-limit'), '--upload-rate-limit'),
      download_rate_limit: rateOf(get('download-rate-limit'), '--download-rate-limit'),
      rate_schedules: schedulesOf(get('rate-schedules')),
      rate_limits_paused_until: pausedUntilOf(get('rate-limits-paused-until')),
    },
    sources,
    flags,
  };
}

/** A rate in bytes a second, with or without a unit (20MiB, 20 MB/s); absent = none. */
function rateOf(v: string | undefined, what: string): number {
  if (v === undefined) return 0;
  const n = parseRate(v);
  if (n === undefined || n > 100_000_000_000) throw new Error(`${what} must be bytes a second, like 20MiB or 20000000 (0 for none), got "${v}"`);
  return n;
}

/** The schedules: JSON text from a flag or variable, a YAML list in config.yml. */
function schedulesOf(v: string | undefined): RateSchedule[] {
  if (v === undefined) return [];
  let list: unknown;
  try {
    list = JSON.parse(v);
  } catch {
    throw new Error(`--rate-schedules must be a JSON list of schedules, like [{"days":["mon"],"start":"09:00","end":"18:00","upload_rate_limit":20971520,"download_rate_limit":0}], got "${v}"`);
  }
  if (!Array.isArray(list)) throw new Error('--rate-schedules must be a list of schedules');
  return list.map((s: unknown, i) => {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new Error(`--rate-schedules: schedule ${i + 1} must be a mapping of days, start, end, upload_rate_limit, download_rate_limit`);
    const o = s as Record<string, unknown>;
    const unknownKey = Object.keys(o).find((k) => !['days', 'start', 'end', 'upload_rate_limit', 'download_rate_limit'].includes(k));
    if (unknownKey) throw new Error(`--rate-schedules: schedule ${i + 1} has an unknown field "${unknownKey}"`);
    const sched = { upload_rate_limit: 0, download_rate_limit: 0, ...o } as RateSchedule;
    const problem = scheduleProblem(sched, `Schedule ${i + 1}`);
    if (problem) throw new Error(`--rate-schedules: ${problem}`);
    return sched;
  });
}

function pausedUntilOf(v: string | undefined): string | null {
  if (v === undefined || v === '' || v === 'null') return null;
  const t = Date.parse(v);
  if (!Number.isFinite(t)) throw new Error(`--rate-limits-paused-until must be a time like 2026-05-01T14:05:00Z, got "${v}"`);
  return new Date(t).toISOString();
}
