// The Queueing section's draft (FIFO mode, transfers at once per direction,
// connections per transfer): the fields as typed, what they change of the
// agent's settings, or what is wrong and which field can fix it, in the words
// the section shows. Pure, so a unit test reads it.
import type { AgentSettings, SettingsChange } from '../../../src/api/agent/settings.js';
import type { Problem } from '../settingsDraft.js';

export interface QueueDraft { fifo: boolean; uploads: string; downloads: string; connections: string }

/** The settings this section edits. */
export const QUEUE_SETTINGS = ['fifo', 'max_active_uploads', 'max_active_downloads', 'connections_per_transfer'] as const;

export const queueDraftOf = (s: AgentSettings): QueueDraft => ({
  fifo: s.fifo,
  uploads: String(s.max_active_uploads),
  downloads: String(s.max_active_downloads),
  connections: s.connections_per_transfer === null ? '' : String(s.connections_per_transfer),
});

/** A whole number from 1 to 64, or undefined. */
function count(text: string): number | undefined {
  const n = Number(text);
  return text.trim() && Number.isInteger(n) && n >= 1 && n <= 64 ? n : undefined;
}

/** What the draft changes, or what is wrong with it and where. */
export function queueChangeOf(s: AgentSettings, d: QueueDraft): SettingsChange | Problem {
  const uploads = count(d.uploads);
  if (uploads === undefined) return { message: 'Uploads at once is a whole number from 1 to 64.', field: 'max_active_uploads' };
  const downloads = count(d.downloads);
  if (downloads === undefined) return { message: 'Downloads at once is a whole number from 1 to 64.', field: 'max_active_downloads' };
  const connections = d.connections.trim() === '' ? null : count(d.connections);
  if (connections === undefined) return { message: 'Connections per transfer is a whole number from 1 to 64, or empty for no limit.', field: 'connections_per_transfer' };
  const change: SettingsChange = {};
  if (d.fifo !== s.fifo) change.fifo = d.fifo;
  if (uploads !== s.max_active_uploads) change.max_active_uploads = uploads;
  if (downloads !== s.max_active_downloads) change.max_active_downloads = downloads;
  if (connections !== s.connections_per_transfer) change.connections_per_transfer = connections;
  return change;
}
