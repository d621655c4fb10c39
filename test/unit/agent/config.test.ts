// The agent's settings: flags win over FERRY_AGENT_* variables, which win over
// config.yml in the config dir; bad values fail with a message naming the setting.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DEFAULT_CHUNK_SIZE, defaultConfigDir, readConfigFile, resolveAgentConfig, writeConfigFile } from '../../../src/agent/config.js';
import { startAgent, type RunningAgent } from '../../../src/agent/index.js';

const MiB = 1024 * 1024;
let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-agent-config-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const yml = (text: string) => fs.writeFileSync(path.join(dir, 'config.yml'), text);

test('defaults: 127.0.0.1:8080, auto-finalize on, 100 MiB chunks, 8 parts in flight, 24 h of retries, no API key', () => {
  const c = resolveAgentConfig({ 'config-dir': dir }, {});
  expect(c).toMatchObject({
    apiKey: undefined, localApiKey: undefined, host: '127.0.0.1', port: 8080, configDir: dir, autoFinalize: true,
    chunkSize: DEFAULT_CHUNK_SIZE, hostedUrl: 'http://127.0.0.1:7400', concurrency: 8, retryForMs: 24 * 3600_000, ui: false,
    localApi: true, thisComputer: false, logLevel: 'info',
  });
  expect(Object.values(c.sources).every((s) => s === 'default')).toBe(true);
  expect(DEFAULT_CHUNK_SIZE).toBe(100 * MiB);
});

test('--retry-for takes a duration from a flag, FERRY_AGENT_RETRY_FOR or config.yml, and refuses nonsense', () => {
  expect(resolveAgentConfig({ 'config-dir': dir, 'retry-for': '90s' }, {}).retryForMs).toBe(90_000);
  expect(resolveAgentConfig({ 'config-dir': dir, 'retry-for': '600' }, {}).retryForMs).toBe(600_000);
  expect(resolveAgentConfig({ 'config-dir': dir }, { FERRY_AGENT_RETRY_FOR: '30m' }).retryForMs).toBe(1_800_000);
  expect(resolveAgentConfig({ 'config-dir': dir }, { FERRY_AGENT_RETRY_FOR: '2d' }).retryForMs).toBe(2 * 86_400_000);
  yml('retry_for: 12h\n');
  expect(resolveAgentConfig({ 'config-dir': dir }, {}).retryForMs).toBe(12 * 3600_000);
  for (const bad of ['forever', '0s', '500ms', '-5m', '400d']) expect(() => resolveAgentConfig({ 'config-dir': dir, 'retry-for': bad }, {}), bad).toThrow(/--retry-for must be a duration/);
});

describe('precedence', () => {
  const env = {
    FERRY_AGENT_LISTEN: '127.0.0.1:9001', FERRY_AGENT_CHUNK_SIZE: String(16 * MiB), FERRY_AGENT_CONCURRENCY: '4',
    FERRY_AGENT_AUTO_FINALIZE: 'false', FERRY_AGENT_HOSTED_URL: 'http://env.example:1', FERRY_AGENT_API_KEY: 'env-key',
    FERRY_AGENT_LOG_LEVEL: 'debug',
  };

  test('config.yml alone is used (snake_case or kebab-case keys)', () => {
    yml('listen: 127.0.0.1:9000\nchunk_size: 8388608\nconcurrency: 2\nauto-finalize: false\nhosted_url: http://file.example:1/\napi_key: file-key\nlog_level: warn\n');
    const c = resolveAgentConfig({ 'config-dir': dir }, {});
    expect(c).toMatchObject({ port: 9000, chunkSize: 8 * MiB, concurrency: 2, autoFinalize: false, hostedUrl: 'http://file.example:1', apiKey: 'file-key', logLevel: 'warn' });
  });

  test('FERRY_AGENT_* wins over config.yml', () => {
    yml('listen: 127.0.0.1:9000\nchunk_size: 8388608\nconcurrency: 2\nauto_finalize: true\nhosted_url: http://file.example:1\napi_key: file-key\n');
    const c = resolveAgentConfig({ 'config-dir': dir }, env);
    expect(c).toMatchObject({ port: 9001, chunkSize: 16 * MiB, concurrency: 4, autoFinalize: false, hostedUrl: 'http://env.example:1', apiKey: 'env-key', logLevel: 'debug' });
  });

  test('flags win over both', () => {
    yml('listen: 127.0.0.1:9000\nconcurrency: 2\n');
    const c = resolveAgentConfig(
      { 'config-dir': dir, listen: '127.0.0.1:9002', 'chunk-size': String(32 * MiB), concurrency: '16', 'auto-finalize': 'true', 'hosted-url': 'http://flag.example:1', 'api-key': 'flag-key', 'log-level': 'error' },
      env,
    );
    expect(c).toMatchObject({ port: 9002, chunkSize: 32 * MiB, concurrency: 16, autoFinalize: true, hostedUrl: 'http://flag.example:1', apiKey: 'flag-key', logLevel: 'error' });
  });

  test('a boolean flag counts like its text', () => {
    expect(resolveAgentConfig({ 'config-dir': dir, 'auto-finalize': false }, {}).autoFinalize).toBe(false);
    expect(resolveAgentConfig({ 'config-dir': dir, 'auto-finalize': true }, { FERRY_AGENT_AUTO_FINALIZE: 'false' }).autoFinalize).toBe(true);
  });

  test('an empty variable counts as unset', () => {
    yml('concurrency: 3\n');
    expect(resolveAgentConfig({ 'config-dir': dir }, { FERRY_AGENT_CONCURRENCY: '' }).concurrency).toBe(3);
  });

  test('the config dir comes from the flag, else FERRY_AGENT_CONFIG_DIR, else the OS default', () => {
    const other = path.join(dir, 'other');
    expect(resolveAgentConfig({}, { FERRY_AGENT_CONFIG_DIR: other }).configDir).toBe(other);
    expect(resolveAgentConfig({ 'config-dir': dir }, { FERRY_AGENT_CONFIG_DIR: other }).configDir).toBe(dir);
    expect(resolveAgentConfig({}, { XDG_CONFIG_HOME: dir }).configDir).toBe(defaultConfigDir({ XDG_CONFIG_HOME: dir }));
    expect(defaultConfigDir({ XDG_CONFIG_HOME: '/x' }, 'linux')).toBe(path.join('/x', 'ferry', 'agent'));
  });

  test('a relative config dir is made absolute', () => {
    expect(path.isAbsolute(resolveAgentConfig({ 'config-dir': 'rel/dir-that-does-not-exist' }, {}).configDir)).toBe(true);
  });
});

describe('listen', () => {
  test('an IPv6 host in brackets', () => {
    expect(resolveAgentConfig({ 'config-dir': dir, listen: '[::1]:8081' }, {})).toMatchObject({ host: '::1', port: 8081 });
  });

  test('port 0 picks a free port', async () => {
    const listen = '127.0.0.1:0';
    expect(resolveAgentConfig({ 'config-dir': dir, listen }, {}).port).toBe(0);
    // Two agents started so run side by side, each where the system put it, and their URLs say where.
    const agents: RunningAgent[] = [];
    try {
      for (const sub of ['one', 'two']) agents.push(await startAgent(resolveAgentConfig({ 'config-dir': path.join(dir, sub), listen }, {}), pino({ level: 'silent' })));
      const [one, two] = agents.map((a) => Number(new URL(a.url!).port));
      expect(one).toBeGreaterThan(0);
      expect(two).not.toBe(one);
      for (const a of agents) expect((await fetch(`${a.url}/about`)).status).toBe(200);
    } finally {
      for (const a of agents) await a.close();
    }
  });

  test.each(['0.0.0.0:8080', '[::]:8080', '192.168.1.20:8080', 'agent.example:8080'])('%s, reachable from other machines, needs an API key', (listen) => {
    expect(() => resolveAgentConfig({ 'config-dir': dir, listen }, {})).toThrow(`--listen ${listen} is reachable from other machines: it needs --api-key`);
    expect(resolveAgentConfig({ 'config-dir': dir, listen, 'api-key': 'k' }, {}).apiKey).toBe('k');
  });

  test.each(['127.0.0.1:8080', '127.1.2.3:8080', '[::1]:8080', 'localhost:8080'])('%s, loopback, needs none', (listen) => {
    expect(resolveAgentConfig({ 'config-dir': dir, listen }, {}).apiKey).toBeUndefined();
  });
});

describe('bad values', () => {
  test.each([
    [{ listen: '8080' }, /--listen must be HOST:PORT/],
    [{ listen: '127.0.0.1:' }, /--listen must be HOST:PORT/],
    [{ listen: '127.0.0.1:70000' }, /--listen port must be an integer from 0 to 65535/],
    [{ 'chunk-size': '1024' }, /--chunk-size must be an integer from 5242880/],
    [{ 'chunk-size': String(6 * 1024 ** 3) }, /--chunk-size must be an integer/],
    [{ 'chunk-size': '10MB' }, /--chunk-size must be an integer.*"10MB"/],
    [{ concurrency: '0' }, /--concurrency must be an integer from 1 to 64/],
    [{ concurrency: '65' }, /--concurrency must be an integer from 1 to 64/],
    [{ concurrency: '2.5' }, /--concurrency must be an integer/],
    [{ 'auto-finalize': 'maybe' }, /--auto-finalize must be true or false, got "maybe"/],
  ])('%o fails clearly', (flags, message) => {
    expect(() => resolveAgentConfig({ 'config-dir': dir, ...flags }, {})).toThrow(message);
  });

  test('a bad value from the environment is named too', () => {
    expect(() => resolveAgentConfig({ 'config-dir': dir }, { FERRY_AGENT_CONCURRENCY: 'many' })).toThrow(/--concurrency must be an integer.*"many"/);
  });

  test('an unknown setting in config.yml fails, naming the file and the key', () => {
    yml('listen: 127.0.0.1:9000\nchunksize: 5\n');
    expect(() => resolveAgentConfig({ 'config-dir': dir }, {})).toThrow(/config\.yml: unknown setting "chunksize"/);
  });

  test('config.yml that is not a mapping fails', () => {
    yml('- a\n- b\n');
    expect(() => resolveAgentConfig({ 'config-dir': dir }, {})).toThrow(/must be a mapping of settings/);
  });

  test('a bad value in config.yml fails like a bad flag', () => {
    yml('auto_finalize: sometimes\n');
    expect(() => resolveAgentConfig({ 'config-dir': dir }, {})).toThrow(/--auto-finalize must be true or false/);
  });

  test('an empty config.yml is no settings', () => {
    yml('');
    expect(resolveAgentConfig({ 'config-dir': dir }, {}).port).toBe(8080);
  });
});

test('queueing: FIFO off, 3 uploads and 3 downloads at once in FIFO mode, no cap per transfer by default; each from a flag, FERRY_AGENT_* or config.yml; bad values refused', () => {
  expect(resolveAgentConfig({ 'config-dir': dir }, {})).toMatchObject({ fifo: false, maxActiveUploads: 3, maxActiveDownloads: 3, connectionsPerTransfer: undefined });
  yml('fifo: true\nmax_active_uploads: 1\nmax-active-downloads: 5\nconnections_per_transfer: 2\n');
  expect(resolveAgentConfig({ 'config-dir': dir }, {})).toMatchObject({ fifo: true, maxActiveUploads: 1, maxActiveDownloads: 5, connectionsPerTransfer: 2 });
  const c = resolveAgentConfig({ 'config-dir': dir, 'max-active-uploads': '4' }, { FERRY_AGENT_CONNECTIONS_PER_TRANSFER: '6' });
  expect(c).toMatchObject({ maxActiveUploads: 4, connectionsPerTransfer: 6 });
  expect([c.sources['max-active-uploads'], c.sources['connections-per-transfer'], c.sources.fifo]).toEqual(['flag', 'env', 'file']);
  for (const [k, v] of [['max-active-uploads', '0'], ['max-active-downloads', '65'], ['connections-per-transfer', '0'], ['connections-per-transfer', 'many']]) {
    expect(() => resolveAgentConfig({ 'config-dir': dir, [k!]: v }, {}), `${k} ${v}`).toThrow(new RegExp(`--${k} must be an integer from 1 to 64`));
  }
  expect(() => resolveAgentConfig({ 'config-dir': dir, fifo: 'maybe' }, {})).toThrow(/--fifo must be true or false/);
});

describe('bandwidth limits', () => {
  const office = { days: ['mon', 'tue'], start: '09:00', end: '18:00', upload_rate_limit: 20 * MiB, download_rate_limit: 0 };

  test('config.yml keeps the schedules as a YAML list, written and read back; a pause survives', () => {
    const until = '2026-11-30T14:05:00.000Z';
    writeConfigFile(dir, { concurrency: '4', 'upload-rate-limit': String(5 * MiB), 'rate-schedules': [office], 'rate-limits-paused-until': until });
    const text = fs.readFileSync(path.join(dir, 'config.yml'), 'utf8');
    expect(text).toMatch(/^rate_schedules:\n {2}- days:\n/m);
    expect(readConfigFile(dir)['rate-schedules']).toEqual([office]);
    const c = resolveAgentConfig({ 'config-dir': dir }, {});
    expect(c.rates).toEqual({ upload_rate_limit: 5 * MiB, download_rate_limit: 0, rate_schedules: [office], rate_limits_paused_until: until });
    expect(c.sources['rate-schedules']).toBe('file');
    writeConfigFile(dir, { 'rate-schedules': [] });
    expect(resolveAgentConfig({ 'config-dir': dir }, {}).rates.rate_schedules).toEqual([]);
  });

  test('a flag or variable gives the schedules as JSON and rates with units; they win over the file', () => {
    yml('upload_rate_limit: 100\n');
    const c = resolveAgentConfig({ 'config-dir': dir, 'upload-rate-limit': '20MiB' }, { FERRY_AGENT_RATE_SCHEDULES: JSON.stringify([office]), FERRY_AGENT_DOWNLOAD_RATE_LIMIT: '5 MB/s' });
    expect(c.rates).toMatchObject({ upload_rate_limit: 20 * MiB, download_rate_limit: 5_000_000, rate_schedules: [office] });
    expect([c.sources['upload-rate-limit'], c.sources['rate-schedules']]).toEqual(['flag', 'env']);
  });

  test('bad limits and schedules fail in words naming the setting', () => {
    const bad = (flags: Record<string, string>) => () => resolveAgentConfig({ 'config-dir': dir, ...flags }, {});
    expect(bad({ 'upload-rate-limit': 'fast' })).toThrow('--upload-rate-limit must be bytes a second, like 20MiB or 20000000 (0 for none), got "fast"');
    expect(bad({ 'rate-schedules': 'mon 9-5' })).toThrow(/--rate-schedules must be a JSON list of schedules/);
    expect(bad({ 'rate-schedules': JSON.stringify([{ ...office, end: '09:00' }]) })).toThrow('--rate-schedules: Schedule 1 starts and ends at 09:00');
    expect(bad({ 'rate-schedules': JSON.stringify([{ ...office, colour: 'red' }]) })).toThrow('--rate-schedules: schedule 1 has an unknown field "colour"');
    expect(bad({ 'rate-limits-paused-until': 'soon' })).toThrow(/--rate-limits-paused-until must be a time/);
  });
});
