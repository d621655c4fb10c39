// One list of channels: the names the preload exposes (src/ipc/names.ts, without
// the schemas) are the keys of the contract's tables (contract.ts for the agent,
// desktop.ts for main), of both handler tables, and of the channel tables of
// docs/desktop.md, exactly.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { channels, events } from '../../../src/ipc/contract.js';
import { desktopChannels, desktopEvents } from '../../../src/ipc/desktop.js';
import { CHANNELS, DESKTOP_CHANNELS, DESKTOP_EVENTS, EVENTS } from '../../../src/ipc/names.js';
import { createHandlers } from '../../../src/agent/ui/handlers.js';
import { desktopHandlers, type DesktopDeps } from '../../../main/desktopChannels.js';
import type { AgentServices } from '../../../src/agent/services/index.js';
import type { EventBus } from '../../../src/agent/events.js';

const sorted = (names: Iterable<string>) => [...names].sort();

/** The names in a table's first column: `uploads.pause`, `.resume` (the same group) are two. */
function firstColumn(table: string): string[] {
  const names: string[] = [];
  for (const row of table.split('\n').filter((l) => /^\| `/.test(l))) {
    let group = '';
    for (const cell of row.split('|')[1]!.split(',')) {
      const name = /`([^`]+)`/.exec(cell)?.[1];
      if (!name) continue;
      if (name.startsWith('.')) names.push(group + name);
      else {
        group = name.slice(0, name.indexOf('.'));
        names.push(name);
      }
    }
  }
  return names;
}

/** docs/desktop.md's section "Channels": the agent's table and events, then main's. */
function documented() {
  const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/desktop.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Channels\n'), doc.indexOf('\n## ', doc.indexOf('\n## Channels\n') + 1));
  const [agent, main] = section.split("\n### Main's channels and events\n") as [string, string];
  const eventsAt = agent.indexOf("The agent's events:");
  const [mainChannels, mainEvents] = main.split('\n| event |') as [string, string];
  return {
    channels: firstColumn(agent.slice(0, eventsAt)),
    events: [...agent.slice(eventsAt).matchAll(/`([a-z]+\.[a-zA-Z]+)`/g)].map((m) => m[1]!),
    desktopChannels: firstColumn(mainChannels),
    desktopEvents: firstColumn(mainEvents),
  };
}

describe('one list of channels', () => {
  test('the agent\'s: the names, the contract and the handler table name exactly the same channels; the events too', () => {
    const handlers = createHandlers({} as AgentServices, { events: {} as EventBus });
    expect(sorted(CHANNELS)).toEqual(sorted(Object.keys(channels)));
    expect(sorted(Object.keys(handlers))).toEqual(sorted(Object.keys(channels)));
    expect(sorted(EVENTS)).toEqual(sorted(Object.keys(events)));
  });

  test('main\'s: the names, the contract and main\'s handler table name exactly the same channels; the events too', () => {
    const handlers = desktopHandlers({} as DesktopDeps);
    expect(sorted(DESKTOP_CHANNELS)).toEqual(sorted(Object.keys(desktopChannels)));
    expect(sorted(Object.keys(handlers))).toEqual(sorted(Object.keys(desktopChannels)));
    expect(sorted(DESKTOP_EVENTS)).toEqual(sorted(Object.keys(desktopEvents)));
  });

  test('no name is both the agent\'s and main\'s (both travel as ferry:<name>)', () => {
    expect(CHANNELS.filter((c) => (DESKTOP_CHANNELS as readonly string[]).includes(c))).toEqual([]);
    expect(EVENTS.filter((e) => (DESKTOP_EVENTS as readonly string[]).includes(e))).toEqual([]);
  });

  test('docs/desktop.md documents every channel and event, once, and no other', () => {
    const d = documented();
    expect(d.channels).toHaveLength(new Set(d.channels).size);
    expect(sorted(d.channels)).toEqual(sorted(CHANNELS));
    expect(sorted(new Set(d.events))).toEqual(sorted(EVENTS));
    expect(sorted(d.desktopChannels)).toEqual(sorted(DESKTOP_CHANNELS));
    expect(sorted(d.desktopEvents)).toEqual(sorted(DESKTOP_EVENTS));
  });
});
