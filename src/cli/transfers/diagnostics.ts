// `ferry diagnostics`: what the agent says of itself and its surroundings
// (GET /diagnostics), and `--bundle [FOLDER]`, a support bundle to send
// (POST /diagnostics/bundle).
import path from 'node:path';
import { clientCommand, UsageError } from './common.js';
import { formatBytes } from '../progress.js';
import type { Diagnostics, Reach } from '../../api/agent/diagnostics.js';

const HELP = `usage: ferry diagnostics [--bundle [FOLDER]]

Prints the agent's versions, settings (secrets hidden), whether the service and
the stores answer and how fast, the free space where it writes, and its recent
warnings and errors.

  --bundle [FOLDER]    write a support bundle instead: a ZIP of the diagnostics,
                       the settings and the agent's log, secrets removed, into
                       FOLDER (default: the agent's user's Downloads folder);
                       prints its path`;

/** One probe, in words. */
function reach(r: Reach): string {
  if (r.reachable) return `${r.url}: answers (${r.status}) in ${Math.round(r.latency_ms ?? 0)} ms`;
  return `${r.url}: ${r.timed_out ? 'no answer (timed out)' : `unreachable (${r.error ?? 'unknown error'})`}`;
}

export function diagnosticsText(d: Diagnostics): string {
  const v = d.versions;
  const lines = [
    `ferry agent ${v.agent} (${v.build_stamp}), Node ${v.node}, ${v.os} (${v.platform} ${v.arch})${v.app ? `, app ${v.app.version} (Electron ${v.app.electron})` : ''}`,
    `signed in: ${d.signed_in ? 'yes' : 'no'}`,
    `service:   ${reach(d.service)}`,
    ...(d.stores.length ? d.stores.map((s, i) => `${i === 0 ? 'stores:   ' : '          '} ${reach(s)}${s.source === 'this_computer' ? ' (this computer)' : ''}`) : ['stores:    none used since the agent started']),
    'free space:',
    ...d.disks.map((k) =>
      `  ${k.path} (${k.uses.join(', ').replace(/_/g, ' ')}): ${k.free_bytes !== null ? `${formatBytes(k.free_bytes)} free of ${formatBytes(k.total_bytes ?? 0)}` : k.timed_out ? 'no answer (timed out)' : k.error}`),
    'settings:',
    ...Object.entries(d.settings).filter(([k]) => k !== 'locked').map(([k, val]) => `  ${k}: ${typeof val === 'string' ? val : JSON.stringify(val)}`),
    d.recent_problems.length ? `recent problems (${d.recent_problems.length}, newest last):` : 'recent problems: none',
    ...d.recent_problems.slice(-20).map((p) => `  ${p.time} ${p.level}: ${p.message}${p.error ? ` (${p.error})` : ''}`),
    `log files: ${d.log_files.join(', ') || 'none'}`,
  ];
  return lines.join('\n');
}

export const diagnostics = clientCommand('diagnostics', HELP, { bundle: { type: 'boolean' } }, async ({ values, positionals, client, print }) => {
  if (values.bundle !== true) {
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}" (a folder goes after --bundle)`);
    const d = await client.request<Diagnostics>('GET', '/diagnostics');
    print(diagnosticsText(d), d);
    return;
  }
  if (positionals.length > 1) throw new UsageError('--bundle takes one folder at most');
  // The agent's working directory may differ from the command's: a folder given is made absolute here.
  const folder = positionals[0] === undefined ? undefined : path.resolve(positionals[0]);
  const b = await client.request<{ path: string; size: number }>('POST', '/diagnostics/bundle', { body: folder ? { folder } : {} });
  print(`support bundle written: ${b.path} (${formatBytes(b.size)})`, b);
}, true);
