// Starts a private, real clamd (Debian's clamav-daemon) on a Unix socket in a
// temporary dir, with a one-line signature database written here: the official
// database cannot be downloaded in CI. The signature is an .hsb line (SHA-256,
// size, name) of the EICAR test file, so EICAR is "found" and nothing else is.
// Call stop() (or close()) in afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The EICAR anti-virus test file: harmless, and flagged by every scanner as a test. */
export const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'latin1');
export const EICAR_SIGNATURE = 'Ferry.Test.EICAR';

export interface TestClamd {
  dir: string;
  socket: string;
  /** Starts clamd (again) and waits until it answers PING. */
  start(): Promise<void>;
  /** Stops clamd and waits for it to exit; the dir stays for a later start(). */
  stop(): Promise<void>;
  /** Stops clamd and removes its dir. */
  close(): Promise<void>;
}

/** clamd's binary: Debian puts it in /usr/sbin, which a non-root PATH may lack. */
async function clamdBinary(): Promise<string> {
  for (const p of ['/usr/sbin/clamd', '/usr/local/sbin/clamd', '/usr/bin/clamd']) {
    if (await fs.access(p).then(() => true, () => false)) return p;
  }
  return 'clamd';
}

function pong(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection({ path: socket });
    let text = '';
    s.setTimeout(1000);
    s.on('connect', () => s.write('zPING\0'));
    s.on('data', (b) => (text += b.toString()));
    s.on('end', () => resolve(text.startsWith('PONG')));
    s.on('error', () => resolve(false));
    s.on('timeout', () => (s.destroy(), resolve(false)));
  });
}

/** Writes the config and the database; start() runs clamd. */
export async function prepareClamd(opts: { streamMaxLength?: string } = {}): Promise<TestClamd> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-clamd-'));
  const socket = path.join(dir, 'clamd.sock');
  const sha = createHash('sha256').update(EICAR).digest('hex');
  await fs.writeFile(path.join(dir, 'ferry-test.hsb'), `${sha}:${EICAR.length}:${EICAR_SIGNATURE}\n`);
  await fs.writeFile(
    path.join(dir, 'clamd.conf'),
    [
      'Foreground yes',
      `LocalSocket ${socket}`,
      `DatabaseDirectory ${dir}`,
      `LogFile ${path.join(dir, 'clamd.log')}`,
      `PidFile ${path.join(dir, 'clamd.pid')}`,
      `StreamMaxLength ${opts.streamMaxLength ?? '64M'}`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const t: TestClamd = {
    dir,
    socket,
    async start() {
      if (child) return;
      const c = spawn(await clamdBinary(), ['-c', path.join(dir, 'clamd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      c.stderr!.on('data', (b) => (stderr += b.toString()));
      child = c;
      // A test that times out never reaches its stop(): clamd must not outlive the test process.
      const orphan = () => c.kill('SIGKILL');
      process.once('exit', orphan);
      exited = new Promise((resolve) => c.once('exit', () => (process.removeListener('exit', orphan), resolve())));
      for (let i = 0; i < 300; i++) {
        if (c.exitCode !== null) throw new Error(`clamd exited (${c.exitCode}): ${stderr}`);
        if (await pong(socket)) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`clamd did not answer PING within 30 s: ${stderr}`);
    },
    async stop() {
      const c = child;
      if (!c) return;
      child = undefined;
      if (c.exitCode === null) c.kill('SIGTERM');
      await exited;
    },
    async close() {
      await t.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** A running clamd. */
export async function startClamd(opts: { streamMaxLength?: string } = {}): Promise<TestClamd> {
  const t = await prepareClamd(opts);
  try {
    await t.start();
  } catch (err) {
    await t.close();
    throw err;
  }
  return t;
}
