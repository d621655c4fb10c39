// `ferry settings`: every setting of the agent (GET /settings), and `ferry
// settings set NAME=VALUE ...` to change some (PATCH /settings), with sizes and
// rates in units people write (20MiB, 20 MB/s), a pause of the bandwidth limits
// as a duration (1h) and the schedules as JSON. Bad input is refused in words
// before anything is sent; the agent's own refusals come back as they are.
import { clientCommand, UsageError } from './common.js';
import { formatBytes } from '../progress.js';
import { duration } from '../../agent/config.js';
import { parseRate, rateWords } from '../../format/rateSchedule.js';
import type { AgentSettings, SettingsAnswer, SettingsChange } from '../../api/agent/settings.js';

const HELP = `usage: ferry settings
       ferry settings set NAME=VALUE [NAME=VALUE ...]

Prints the agent's settings (those set by a flag or the environment are marked
locked), or changes some. NAME is a setting as GET /settings names it, with - or _:
  upload-rate-limit, download-rate-limit   bytes a second: 20MiB, 20MB, 5000000; 0 or none = no limit
  rate-schedules                           a JSON list: [{"days":["mon","tue"],"start":"09:00","end":"18:00",
                                           "upload_rate_limit":20971520,"download_rate_limit":0}]; [] for none
  rate-limits-paused-until                 a duration from now (1h, 30m), a time (2026-05-01T14:05:00Z), or none
  concurrency                              parts in flight, 1 to 64
  fifo                                     true or false: transfers start in the order they were made
  max-active-uploads, max-active-downloads transfers of a direction at once in FIFO mode, 1 to 64
  connections-per-transfer                 parts in flight of one transfer, 1 to 64; none = no cap
  chunk-size                               bytes per part: 100MiB, 5MiB to 5GiB
  auto-finalize, local-api, this-computer  true or false
  hosted-url, listen, local-api-key        text (local-api-key=none removes the key)
Example: ferry settings set upload-rate-limit=20MiB download-rate-limit=none`;

const BOOLEANS = ['auto_finalize', 'local_api', 'this_computer', 'fifo'];
/** Whole numbers from 1 to 64 (connections_per_transfer also takes none). */
const COUNTS = ['concurrency', 'max_active_uploads', 'max_active_downloads', 'connections_per_transfer'];
const TEXTS = ['hosted_url', 'listen', 'local_api_key'];

/** One NAME=VALUE as the change it makes, or a UsageError in words. */
export function settingOf(arg: string, now = Date.now()): Partial<SettingsChange> {
  const cut = arg.indexOf('=');
  if (cut <= 0) throw new UsageError(`"${arg}" is not NAME=VALUE (like upload-rate-limit=20MiB)`);
  const name = arg.slice(0, cut).trim().replace(/-/g, '_');
  const value = arg.slice(cut + 1).trim();
  const none = /^(none|off|null)$/i.test(value);
  switch (name) {
    case 'upload_rate_limit':
    case 'download_rate_limit':
    case 'chunk_size': {
      const n = parseRate(value);
      if (n === undefined) throw new UsageError(`${name.replace(/_/g, '-')} must be ${name === 'chunk_size' ? 'a size like 100MiB' : 'bytes a second like 20MiB or 20MB (0 or none for no limit)'}, got "${value}"`);
      return { [name]: n };
    }
    case 'rate_schedules': {
      let list: unknown;
      try {
        list = JSON.parse(value);
      } catch {
        throw new UsageError(`rate-schedules must be a JSON list, like [{"days":["mon"],"start":"09:00","end":"18:00","upload_rate_limit":20971520,"download_rate_limit":0}], got ${value}`);
      }
      if (!Array.isArray(list)) throw new UsageError('rate-schedules must be a JSON list ([] for none)');
      return { rate_schedules: list as SettingsChange['rate_schedules'] };
    }
    case 'rate_limits_paused_until': {
      if (none) return { rate_limits_paused_until: null };
      if (/^\d+(\.\d+)?\s*(ms|s|m|min|h|d)?$/.test(value)) {
        try {
          return { rate_limits_paused_until: new Date(now + duration(value, 'rate-limits-paused-until')).toISOString() };
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
      }
      const t = Date.parse(value);
      if (!Number.isFinite(t)) throw new UsageError(`rate-limits-paused-until must be a duration (1h), a time (2026-05-01T14:05:00Z) or none, got "${value}"`);
      return { rate_limits_paused_until: new Date(t).toISOString() };
    }
    default:
      if (BOOLEANS.includes(name)) {
        if (!/^(true|false|on|off|yes|no)$/i.test(value)) throw new UsageError(`${name.replace(/_/g, '-')} must be true or false, got "${value}"`);
        return { [name]: /^(true|on|yes)$/i.test(value) };
      }
      if (COUNTS.includes(name)) {
        if (name === 'connections_per_transfer' && none) return { connections_per_transfer: null };
        const n = Number(value);
        if (!Number.isInteger(n)) throw new UsageError(`${name.replace(/_/g, '-')} must be a whole number from 1 to 64, got "${value}"`);
        return { [name]: n };
      }
      if (TEXTS.includes(name)) return { [name]: name === 'local_api_key' && none ? null : value };
      throw new UsageError(`there is no setting "${arg.slice(0, cut)}": the settings are upload-rate-limit, download-rate-limit, rate-schedules, rate-limits-paused-until, concurrency, fifo, max-active-uploads, max-active-downloads, connections-per-transfer, chunk-size, auto-finalize, local-api, this-computer, hosted-url, listen, local-api-key`);
  }
}

const rate = (n: number) => (n === 0 ? 'none' : `${formatBytes(n)}/s`);

/** The settings as lines, those locked marked with why. */
export function settingsText(s: AgentSettings, now = Date.now()): string {
  const lock = (k: string) => (s.locked[k] ? `  (locked: ${s.locked[k]})` : '');
  const lines = [
    `hosted-url:               ${s.hosted_url}${lock('hosted_url')}`,
    `this-computer:            ${s.this_computer}${lock('this_computer')}`,
    `concurrency:              ${s.concurrency}${lock('concurrency')}`,
    `chunk-size:               ${formatBytes(s.chunk_size)}${lock('chunk_size')}`,
    `fifo:                     ${s.fifo}${lock('fifo')}`,
    `max-active-uploads:       ${s.max_active_uploads}${lock('max_active_uploads')}`,
    `max-active-downloads:     ${s.max_active_downloads}${lock('max_active_downloads')}`,
    `connections-per-transfer: ${s.connections_per_transfer ?? 'no cap'}${lock('connections_per_transfer')}`,
    `auto-finalize:            ${s.auto_finalize}${lock('auto_finalize')}`,
    `local-api:                ${s.local_api}${lock('local_api')}`,
    `listen:                   ${s.listen}${lock('listen')}`,
    `local-api-key:            ${s.local_api_key === null ? 'none' : 'set'}${lock('local_api_key')}`,
    `upload-rate-limit:        ${rate(s.upload_rate_limit)}${lock('upload_rate_limit')}`,
    `download-rate-limit:      ${rate(s.download_rate_limit)}${lock('download_rate_limit')}`,
    `rate-schedules:           ${s.rate_schedules.length === 0 ? 'none' : `${s.rate_schedules.length}`}${lock('rate_schedules')}`,
    ...s.rate_schedules.map((r, i) => `  ${i + 1}. ${r.days.join(',')} ${r.start}-${r.end}: upload ${rate(r.upload_rate_limit)}, download ${rate(r.download_rate_limit)}`),
    `rate-limits-paused-until: ${s.rate_limits_paused_until ?? 'none'}${lock('rate_limits_paused_until')}`,
  ];
  const n = s.rate_limits_now;
  const state = { upload: n.upload_rate_limit, download: n.download_rate_limit, until: n.until === null ? null : Date.parse(n.until), pausedUntil: n.paused_until === null ? null : Date.parse(n.paused_until) };
  lines.push(`limits now:               ${rateWords(state, now) ?? 'none'}`);
  return lines.join('\n');
}

export const settings = clientCommand(
  'settings',
  HELP,
  {},
  async ({ positionals, client, print }) => {
    if (positionals.length === 0) {
      const s = await client.request<AgentSettings>('GET', '/settings');
      print(settingsText(s), s);
      return;
    }
    if (positionals[0] !== 'set') throw new UsageError(`unknown subcommand "${positionals[0]}": use "ferry settings" or "ferry settings set NAME=VALUE"`);
    if (positionals.length === 1) throw new UsageError('give at least one NAME=VALUE, like upload-rate-limit=20MiB');
    const change = Object.assign({}, ...positionals.slice(1).map((a) => settingOf(a))) as SettingsChange;
    const answer = await client.request<SettingsAnswer>('PATCH', '/settings', { body: change });
    print(`${settingsText(answer.settings)}${answer.restarting ? '\nThe agent starts again for this change.' : ''}`, answer);
  },
  true,
);
