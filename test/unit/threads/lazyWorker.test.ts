// The helper thread of the whole-file reader and the MD5 workers: started on
// first use, keeping the process alive only while it has work, failing its work
// when it dies and starting again on the next use.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LazyWorker } from '../../../src/threads/lazyWorker.js';

// Echoes each message; "die" ends the thread.
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => (m === 'die' ? process.exit(3) : parentPort.postMessage(m)));
`;

function echo() {
  const got: unknown[] = [];
  const deaths: Error[] = [];
  const worker = new LazyWorker(ECHO, {}, { message: (m) => got.push(m), dead: (err) => deaths.push(err) });
  return { worker, got, deaths };
}

describe('LazyWorker', () => {
  it('starts on the first begin() and answers through the message handler', async () => {
    const { worker, got } = echo();
    const w = worker.begin();
    expect(worker.begin()).toBe(w);
    w.postMessage('one');
    await expect.poll(() => got).toEqual(['one']);
    await worker.terminate();
  });

  it('reports a worker that dies once, and the next begin() starts a new one', async () => {
    const { worker, got, deaths } = echo();
    const first = worker.begin();
    first.postMessage('die');
    await expect.poll(() => deaths.length).toBe(1);
    expect(deaths[0]!.message).toMatch(/exited \(3\)/);
    const second = worker.begin();
    expect(second).not.toBe(first);
    second.postMessage('two');
    await expect.poll(() => got).toEqual(['two']);
    await worker.terminate();
    expect(deaths).toHaveLength(1); // a terminate() is not a death
  });

  // In a child process: the property is about whether a process may exit. The
  // script is a file, not -e: workers inherit --input-type, and the echo is CommonJS.
  const child = async (script: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-lazy-worker-'));
    const file = path.join(dir, 'child.mjs');
    await writeFile(file, script.replace('LAZY', JSON.stringify(fileURLToPath(new URL('../../../src/threads/lazyWorker.ts', import.meta.url)))));
    try {
      return await new Promise<{ code: number | null; out: string }>((resolve) => {
        const p = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        const guard = setTimeout(() => p.kill('SIGKILL'), 15_000);
        p.on('exit', (code) => {
          clearTimeout(guard);
          resolve({ code, out });
        });
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const setup = `
    import { LazyWorker } from LAZY;
    const w = new LazyWorker(${JSON.stringify(ECHO)}, {}, { message: (m) => { console.log('answer', m); if (m === 'done') w.end(); }, dead: () => {} });
  `;

  it('lets the process exit once its jobs are answered', async () => {
    const r = await child(`${setup} w.begin().postMessage('done');`);
    expect(r).toEqual({ code: 0, out: 'answer done\n' });
  });

  it('keeps the process alive while a job is not answered', async () => {
    // The job's answer ('wait') does not end it: only the timer below ends the process.
    const r = await child(`${setup} w.begin().postMessage('wait'); setTimeout(() => { console.log('still here'); process.exit(7); }, 500).unref();`);
    expect(r).toEqual({ code: 7, out: 'answer wait\nstill here\n' });
  });
});
