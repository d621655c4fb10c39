// One list of channels: the contract's map, the names the preload exposes
// (src/ipc/names.ts, without the schemas) and the handler table agree exactly.
import { describe, expect, test } from 'vitest';
import { channels, events } from '../../../src/ipc/contract.js';
import { CHANNELS, EVENTS } from '../../../src/ipc/names.js';
import { createHandlers } from '../../../src/agent/ui/handlers.js';
import type { AgentServices } from '../../../src/agent/services/index.js';
import type { EventBus } from '../../../src/agent/events.js';

describe('one contract', () => {
  test('the channel map, the preload\'s allowlist and the handler table name exactly the same channels; the events too', () => {
    const handlers = createHandlers({} as AgentServices, { events: {} as EventBus });
    expect([...CHANNELS].sort()).toEqual(Object.keys(channels).sort());
    expect(Object.keys(handlers).sort()).toEqual(Object.keys(channels).sort());
    expect([...EVENTS].sort()).toEqual(Object.keys(events).sort());
  });
});
