// Settings' Queueing section before anything is sent: each bad count in words
// with the field that can fix it; a good draft is the change it makes, an
// empty "Connections per transfer" meaning no limit (null).
import { describe, expect, it } from 'vitest';
import { queueChangeOf, queueDraftOf, type QueueDraft } from '../../../renderer/screens/settings/queueDraft.js';
import type { AgentSettings } from '../../../src/api/agent/settings.js';

const settings: AgentSettings = {
  hosted_url: 'http://127.0.0.1:7400', this_computer: false, concurrency: 8, chunk_size: 16 * 1024 * 1024, auto_finalize: true,
  local_api: true, listen: '127.0.0.1:7401', local_api_key: null, locked: {},
  fifo: false, max_active_uploads: 3, max_active_downloads: 3, connections_per_transfer: null,
  upload_rate_limit: 0, download_rate_limit: 0, rate_schedules: [], rate_limits_paused_until: null,
  rate_limits_now: { upload_rate_limit: 0, download_rate_limit: 0, until: null, paused_until: null },
};
const draft = (change: Partial<QueueDraft>) => ({ ...queueDraftOf(settings), ...change });

describe('queueChangeOf', () => {
  const bad: [string, Partial<QueueDraft>, string, string][] = [
    ['uploads 0', { uploads: '0' }, 'max_active_uploads', 'Uploads at once is a whole number from 1 to 64.'],
    ['uploads empty', { uploads: ' ' }, 'max_active_uploads', 'Uploads at once is a whole number from 1 to 64.'],
    ['downloads 65', { downloads: '65' }, 'max_active_downloads', 'Downloads at once is a whole number from 1 to 64.'],
    ['downloads 1.5', { downloads: '1.5' }, 'max_active_downloads', 'Downloads at once is a whole number from 1 to 64.'],
    ['connections 0', { connections: '0' }, 'connections_per_transfer', 'Connections per transfer is a whole number from 1 to 64, or empty for no limit.'],
  ];
  for (const [what, d, field, message] of bad) it(what, () => expect(queueChangeOf(settings, draft(d))).toEqual({ message, field }));

  it('a good draft is what it changes; an empty connections field is no limit', () => {
    expect(queueDraftOf(settings)).toEqual({ fifo: false, uploads: '3', downloads: '3', connections: '' });
    expect(queueChangeOf(settings, draft({}))).toEqual({});
    expect(queueChangeOf(settings, draft({ fifo: true, uploads: '1', downloads: '2', connections: '4' }))).toEqual({
      fifo: true, max_active_uploads: 1, max_active_downloads: 2, connections_per_transfer: 4,
    });
    expect(queueChangeOf({ ...settings, connections_per_transfer: 4 }, draft({ connections: '' }))).toEqual({ connections_per_transfer: null });
  });
});
