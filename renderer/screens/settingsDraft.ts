// The Settings form's draft: the fields as typed, what they change of the agent's
// settings, or what is wrong and which field can fix it (checked before anything
// is sent, in the words the form shows). Pure, so a unit test reads it.
import type { AgentSettings, SettingsChange } from '../../src/api/agent/settings.js';

/** A problem and the setting it is about (the form's FieldProblem takes this shape). */
export interface Problem { message: string; field?: string }

const MiB = 1024 * 1024;

export interface Draft { concurrency: string; chunkMiB: string; auto_finalize: boolean; local_api: boolean; listen: string; local_api_key: string }

export const draftOf = (s: AgentSettings): Draft => ({
  concurrency: String(s.concurrency),
  chunkMiB: String(Math.round(s.chunk_size / MiB)),
  auto_finalize: s.auto_finalize,
  local_api: s.local_api,
  listen: s.listen,
  local_api_key: s.local_api_key ?? '',
});

/** The fields of the form a problem shows beside, by the setting's name. */
export const PLACED = ['concurrency', 'chunk_size', 'listen', 'local_api_key'] as const;

const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** What the draft changes, or what is wrong with it and where. */
export function changeOf(s: AgentSettings, d: Draft): SettingsChange | Problem {
  const change: SettingsChange = {};
  const concurrency = Number(d.concurrency);
  if (!d.concurrency.trim() || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) return { message: 'Concurrency is a whole number from 1 to 64.', field: 'concurrency' };
  const chunk = Number(d.chunkMiB);
  if (!d.chunkMiB.trim() || !Number.isInteger(chunk) || chunk < 5 || chunk > 5120) return { message: 'Chunk size is a whole number of MiB from 5 to 5120.', field: 'chunk_size' };
  if (concurrency !== s.concurrency) change.concurrency = concurrency;
  if (chunk * MiB !== s.chunk_size) change.chunk_size = chunk * MiB;
  if (d.auto_finalize !== s.auto_finalize) change.auto_finalize = d.auto_finalize;
  if (d.local_api !== s.local_api) change.local_api = d.local_api;
  const listen = d.listen.trim();
  const key = d.local_api_key.trim() || null;
  if (listen !== s.listen) {
    const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(listen);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return { message: 'The local API address is HOST:PORT, like 127.0.0.1:7401 (a port from 1 to 65535).', field: 'listen' };
    if (!isLoopback(m[1]!) && key === null && !s.locked.local_api_key) {
      return { message: `Other computers can reach ${listen}: give it a local API key first (New key).`, field: 'listen' };
    }
    change.listen = listen;
  }
  if (key !== s.local_api_key) {
    if (key !== null && key.length < 16) return { message: 'The local API key is at least 16 characters.', field: 'local_api_key' };
    if (key !== null && !/^[\x21-\x7e]+$/.test(key)) return { message: 'The local API key holds letters, digits and punctuation only: no spaces or accents.', field: 'local_api_key' };
    change.local_api_key = key;
  }
  return change;
}

export const isProblem = (c: SettingsChange | Problem): c is Problem => typeof (c as Problem).message === 'string';

/** An answer of the agent's without a field is the field's when the change held only that field. */
export function placeOf(p: Problem, change: SettingsChange): Problem {
  if (p.field) return p;
  const shown = Object.keys(change).filter((k) => (PLACED as readonly string[]).includes(k));
  return shown.length === 1 && Object.keys(change).length === 1 ? { ...p, field: shown[0] } : p;
}

