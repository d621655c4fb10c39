// The Settings form's checks before anything is sent: each bad value in words,
// with the field that can fix it; a good draft is the change it makes; an answer
// of the agent's without a field goes to the only field the change held.
import { describe, expect, it } from 'vitest';
import { changeOf, draftOf, placeOf } from '../../../renderer/screens/settingsDraft.js';
import type { AgentSettings } from '../../../src/api/agent/settings.js';

const MiB = 1024 * 1024;
const settings: AgentSettings = {
  hosted_url: 'http://127.0.0.1:7400', this_computer: false, concurrency: 4, chunk_size: 16 * MiB, auto_finalize: true,
  local_api: true, listen: '127.0.0.1:7401', local_api_key: null, locked: {},
  fifo: false, max_active_uploads: 3, max_active_downloads: 3, connections_per_transfer: null,
  upload_rate_limit: 0, download_rate_limit: 0, rate_schedules: [], rate_limits_paused_until: null,
  rate_limits_now: { upload_rate_limit: 0, download_rate_limit: 0, until: null, paused_until: null },
};
const draft = (change: Partial<ReturnType<typeof draftOf>>) => ({ ...draftOf(settings), ...change });

describe('changeOf', () => {
  const bad: [string, Partial<ReturnType<typeof draftOf>>, string, string][] = [
    ['concurrency 0', { concurrency: '0' }, 'concurrency', 'Concurrency is a whole number from 1 to 64.'],
    ['concurrency empty', { concurrency: '' }, 'concurrency', 'Concurrency is a whole number from 1 to 64.'],
    ['concurrency 2.5', { concurrency: '2.5' }, 'concurrency', 'Concurrency is a whole number from 1 to 64.'],
    ['chunk 3 MiB', { chunkMiB: '3' }, 'chunk_size', 'Chunk size is a whole number of MiB from 5 to 5120.'],
    ['chunk 6000 MiB', { chunkMiB: '6000' }, 'chunk_size', 'Chunk size is a whole number of MiB from 5 to 5120.'],
    ['an address without a port', { listen: 'localhost' }, 'listen', 'The local API address is HOST:PORT, like 127.0.0.1:7401 (a port from 1 to 65535).'],
    ['port 70000', { listen: '127.0.0.1:70000' }, 'listen', 'The local API address is HOST:PORT, like 127.0.0.1:7401 (a port from 1 to 65535).'],
    ['reached by others, no key', { listen: '0.0.0.0:7999' }, 'listen', 'Other computers can reach 0.0.0.0:7999: give it a local API key first (New key).'],
    ['a key too short', { local_api_key: 'short' }, 'local_api_key', 'The local API key is at least 16 characters.'],
    ['a key with spaces', { local_api_key: 'a key with spaces in it' }, 'local_api_key', 'The local API key holds letters, digits and punctuation only: no spaces or accents.'],
  ];
  for (const [what, d, field, message] of bad) {
    it(what, () => expect(changeOf(settings, draft(d))).toEqual({ message, field }));
  }

  it('a good draft is what it changes', () => {
    expect(changeOf(settings, draft({}))).toEqual({});
    expect(changeOf(settings, draft({ concurrency: '8', chunkMiB: '32', listen: '0.0.0.0:7999', local_api_key: 'k'.repeat(16) }))).toEqual({
      concurrency: 8, chunk_size: 32 * MiB, listen: '0.0.0.0:7999', local_api_key: 'k'.repeat(16),
    });
    // A key given where the agent started is one: the address may be reached by others.
    expect(changeOf({ ...settings, locked: { local_api_key: 'set by --api-key' } }, draft({ listen: '[::]:7999' }))).toEqual({ listen: '[::]:7999' });
  });
});

describe('placeOf', () => {
  it("puts an answer without a field beside the change's only field, else at the foot", () => {
    expect(placeOf({ message: '127.0.0.1:7999 is in use' }, { listen: '127.0.0.1:7999' })).toEqual({ message: '127.0.0.1:7999 is in use', field: 'listen' });
    expect(placeOf({ message: 'x' }, { listen: '127.0.0.1:7999', local_api: true })).toEqual({ message: 'x' });
    expect(placeOf({ message: 'x', field: 'concurrency' }, { listen: '127.0.0.1:7999' })).toEqual({ message: 'x', field: 'concurrency' });
  });
});
