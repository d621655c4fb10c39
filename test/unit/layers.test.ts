// The layer check fails on each crossing the desktop work once made, so none
// comes back: the agent and the window's contract importing each other, the
// contract's process importing the command line, and the web page importing the
// window's code. Each case is a small tree of its own fed to the real script.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';

const script = path.resolve(import.meta.dirname, '../../scripts/check-layers.mjs');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-layers-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

let n = 0;
/** Runs the checker on a tree of these files (path → text). */
function checkTree(files: Record<string, string>) {
  const root = path.join(tmp, String(++n));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  const r = spawnSync(process.execPath, [script, '--root', root], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

/** A tree laid out as the code is now, which passes. */
const sound = {
  'src/api/agent/errors.ts': 'export const AgentErrorCode = { badRequest: 262145 };\n',
  'src/api/agent/uploads.ts': "import { Type } from 'typebox';\nexport const UploadRecord = Type.Object({});\n",
  'src/ipc/contract.ts': "import { Type } from 'typebox';\nimport { UploadRecord } from '../api/agent/uploads.js';\nexport const channels = {};\n",
  'src/ipc/names.ts': "export const CHANNELS = ['uploads.create'] as const;\n",
  'src/agent/services/uploads.ts': "import { UploadRecord } from '../../api/agent/uploads.js';\n",
  'src/agent/ui/handlers.ts': "import { channels } from '../../ipc/contract.js';\nimport type { UploadsService } from '../services/uploads.js';\n",
  'src/agent/server/ui.ts': "import { dispatch } from '../ui/handlers.js';\nimport type { EventName } from '../../ipc/contract.js';\n",
  'src/cli/runAgent.ts': "import { startAgent } from '../agent/index.js';\n",
  'src/cli/agentProcess.ts': "import { startAgentRun } from './runAgent.js';\nimport { hostAgent } from '../agent/ui/agentHost.js';\n",
  'src/format/sizes.ts': 'export const formatBytes = (n: number) => `${n} B`;\n',
  'main/supervisor.ts': "import type { Answer } from '../src/ipc/contract.js';\nimport { isHostMessage } from '../src/ipc/port.js';\n",
  'main/preload.ts': "import { contextBridge } from 'electron';\nimport { CHANNELS } from '../src/ipc/names.js';\n",
  'renderer/transport/types.ts': "import type { Channel } from '../../src/ipc/contract.js';\nimport { type UploadRecord } from '../../src/api/agent/uploads.js';\n",
  'web/portal/main.ts': "import { formatBytes } from '../../src/format/sizes.js';\nimport type { PortalView } from '../../src/api/hosted/portals.js';\n",
};

describe('the layer check', () => {
  test('passes a tree whose imports keep to the rules, and the repository itself', () => {
    expect(checkTree(sound)).toMatchObject({ status: 0 });
    const repo = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 });
    expect(repo.stderr).toBe('');
    expect(repo.status).toBe(0);
  });

  test('fails when the agent imports the handler table from the contract, and the contract the agent', () => {
    const r = checkTree({
      ...sound,
      'src/ipc/handlers.ts': "import type { AgentServices } from '../agent/services/index.js';\n",
      'src/agent/server/ui.ts': "import { dispatch } from '../../ipc/handlers.js';\nimport { channels } from '../../ipc/contract.js';\n",
    });
    expect(r.status).toBe(1);
    expect(r.out).toContain('src/ipc/handlers.ts imports "../agent/services/index.js": src/ipc may import only src/api');
    expect(r.out).toContain('src/agent/server/ui.ts imports "../../ipc/handlers.js": src/agent may import it only with "import type"');
    expect(r.out).toContain('src/agent/server/ui.ts imports "../../ipc/contract.js": src/agent may import it only with "import type"');
  });

  test('fails when the agent\'s process sits in the contract or the agent imports the command line', () => {
    const r = checkTree({
      ...sound,
      'src/ipc/agentProcess.ts': "import { startAgentRun } from '../cli/runAgent.js';\n",
      'src/agent/ui/agentHost.ts': "import { startAgentRun } from '../../cli/runAgent.js';\n",
    });
    expect(r.status).toBe(1);
    expect(r.out).toContain('src/ipc/agentProcess.ts imports "../cli/runAgent.js": src/ipc may import only src/api');
    expect(r.out).toMatch(/src\/agent\/ui\/agentHost\.ts imports "\.\.\/\.\.\/cli\/runAgent\.js": src\/agent\/ui may import only [^\n]*src\/ipc$/m);
  });

  test('fails when the web page imports the window\'s code or the contract', () => {
    const r = checkTree({
      ...sound,
      'renderer/format.ts': 'export const formatBytes = (n: number) => `${n} B`;\n',
      'src/ipc/units.ts': 'export const KiB = 1024;\n',
      'web/portal/main.ts': "import { formatBytes } from '../../renderer/format.js';\n",
      'web/portal/checks.ts': "import { KiB } from '../../src/ipc/units.js';\n",
    });
    expect(r.status).toBe(1);
    expect(r.out).toContain('web/portal/main.ts imports "../../renderer/format.js": web may import only');
    expect(r.out).toContain('web/portal/checks.ts imports "../../src/ipc/units.js": web may import only');
  });

  test('holds main, the preload and the window to types where they need no code, and to their packages', () => {
    const r = checkTree({
      ...sound,
      'main/ipcRelay.ts': "import { UploadRecord } from '../src/api/agent/uploads.js';\nimport { hostAgent } from '../src/agent/ui/agentHost.js';\n",
      'main/preload.ts': "import { channels } from '../src/ipc/contract.js';\n",
      'renderer/App.tsx': "import { channels, type Channel } from '../src/ipc/contract.js';\nimport fs from 'node:fs';\n",
      'src/format/bytes.ts': "import { Type } from 'typebox';\n",
    });
    expect(r.status).toBe(1);
    expect(r.out).toContain('main/ipcRelay.ts imports "../src/api/agent/uploads.js": main may import it only with "import type"');
    expect(r.out).toContain('main/ipcRelay.ts imports "../src/agent/ui/agentHost.js": main may import only');
    expect(r.out).toContain('main/preload.ts imports "../src/ipc/contract.js": main/preload.ts may import only src/ipc/names.ts, src/api/agent/errors.ts');
    expect(r.out).toContain('renderer/App.tsx imports "../src/ipc/contract.js": renderer may import it only with "import type"');
    expect(r.out).toContain('renderer/App.tsx imports "node:fs": renderer may not import Node\'s modules');
    expect(r.out).toContain('src/format/bytes.ts imports "typebox": src/format may not import the package typebox');
  });

  test('fails on a folder no rule names', () => {
    const r = checkTree({ ...sound, 'src/misc/thing.ts': 'export const x = 1;\n' });
    expect(r.status).toBe(1);
    expect(r.out).toContain('src/misc/thing.ts: no layer rule names its folder');
  });
});
