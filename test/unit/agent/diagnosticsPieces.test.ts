// The pieces of diagnostics apart from the agent: the log tee (the host's stream
// and level untouched, the ring of recent problems bounded, the file rotated at
// its size and left alone once closed), the redaction of secrets, and the ZIP
// writer read back by unzip.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOG_FILE_BYTES, RECENT_PROBLEMS, teeAgentLog } from '../../../src/agent/diagnostics/logTee.js';
import { redact } from '../../../src/agent/diagnostics/secrets.js';
import { zipBuffers } from '../../../src/agent/diagnostics/zipWriter.js';

const run = promisify(execFile);
let tmp: string;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ferry-diag-unit-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A host logger writing to memory. */
function hostLogger(level: string) {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level }, stream), lines };
}

describe('the log tee', () => {
  test('the host stream keeps its level; the ring holds warnings and errors; the file holds info and above', async () => {
    const dir = path.join(tmp, 'levels');
    const host = hostLogger('warn');
    const { log, logs } = teeAgentLog(host.log, dir);
    log.debug('a debug line');
    log.info({ upload: 'u1' }, 'an info line');
    log.warn({ err: new Error('disk said no') }, 'a warning');
    log.child({ component: 'engine' }).error('an error');
    await new Promise((r) => setImmediate(r));
    expect(host.lines.map((l) => l.msg)).toEqual(['a warning', 'an error']);
    expect(host.lines[0].pid).toBe(process.pid);
    expect(logs.recent().map((p) => [p.level, p.message, p.error])).toEqual([['warn', 'a warning', 'disk said no'], ['error', 'an error', null]]);
    expect(JSON.parse(logs.recent()[1]!.details!)).toEqual({ component: 'engine' });
    const file = await fs.readFile(path.join(dir, 'agent.log'), 'utf8');
    expect(file.trim().split('\n').map((l) => JSON.parse(l).msg)).toEqual(['an info line', 'a warning', 'an error']);
    logs.close();
    log.error('after the close');
    expect(await fs.readFile(path.join(dir, 'agent.log'), 'utf8')).toBe(file);
  });

  test('a silent host still gets the ring and the file; the ring keeps the last RECENT_PROBLEMS', async () => {
    const dir = path.join(tmp, 'ring');
    const { log, logs } = teeAgentLog(pino({ level: 'silent' }), dir);
    for (let i = 0; i < RECENT_PROBLEMS + 20; i++) log.warn(`problem ${i}`);
    const recent = logs.recent();
    expect(recent.length).toBe(RECENT_PROBLEMS);
    expect(recent[0]!.message).toBe('problem 20');
    expect(recent.at(-1)!.message).toBe(`problem ${RECENT_PROBLEMS + 19}`);
    logs.close();
  });

  test('past its size the file moves to agent.1.log, that to agent.2.log, and no more are kept', async () => {
    const dir = path.join(tmp, 'rotate');
    const { log, logs } = teeAgentLog(pino({ level: 'silent' }), dir);
    const pad = 'x'.repeat(1000);
    // Enough for three rotations: the oldest goes.
    for (let i = 0; i < (LOG_FILE_BYTES / 1000) * 3.5; i++) log.info({ pad, i }, 'line');
    logs.close();
    expect((await fs.readdir(dir)).sort()).toEqual(['agent.1.log', 'agent.2.log', 'agent.log']);
    expect(logs.files()).toEqual([path.join(dir, 'agent.log'), path.join(dir, 'agent.1.log'), path.join(dir, 'agent.2.log')]);
    for (const f of logs.files()) expect((await fs.stat(f)).size).toBeLessThanOrEqual(LOG_FILE_BYTES);
    const first = (f: string) => fs.readFile(f, 'utf8').then((t) => JSON.parse(t.split('\n')[0]!).i as number);
    // Newest first, and nothing lost between them.
    const [a, b, c] = await Promise.all(logs.files().map(first));
    expect(a!).toBeGreaterThan(b!);
    expect(b!).toBeGreaterThan(c!);
    expect(c!).toBeGreaterThan(0);
  });
});

describe('redact', () => {
  const secrets = { keys: ['key.with.dots-123456'], tokens: new Set(['tok_abcdefgh1234']) };
  test.each([
    ['a known key anywhere', 'sent key.with.dots-123456!', 'sent (hidden)!'],
    ['a known token as a word', 'url /l/x/tok_abcdefgh1234?a=1', 'url /l/x/(hidden)?a=1'],
    ['a word that only holds a token stays', 'xtok_abcdefgh1234', 'xtok_abcdefgh1234'],
    ['a URL\'s user and password', 'GET https://ana:pw@example.com/x', 'GET https://(hidden)@example.com/x'],
    ['a pre-signed signature and credential', 'https://s3/b/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=abcdef&x=1', 'https://s3/b/k?X-Amz-Credential=(hidden)&X-Amz-Signature=(hidden)&x=1'],
    ['JSON fields named as secrets', '{"password":"p\\"w","link_secret":"s","api_key":"k","name":"n"}', '{"password":"(hidden)","link_secret":"(hidden)","api_key":"(hidden)","name":"n"}'],
    ['a bearer token', 'authorization: Bearer eyJhbGciOi.abc.def', 'authorization: Bearer (hidden)'],
  ])('%s', (_what, text, want) => {
    expect(redact(text, secrets)).toBe(want);
  });
});

describe('the ZIP writer', () => {
  test('unzip lists, tests and unpacks what it wrote, names in UTF-8 included', async () => {
    const big = Buffer.alloc(300_000, 'log line\n');
    const zip = zipBuffers([
      { name: 'diagnostics.json', data: Buffer.from('{"a":1}\n') },
      { name: 'logs/agent.log', data: big },
      { name: 'notes/été.txt', data: Buffer.from('') },
    ]);
    expect(zip.length).toBeLessThan(big.length / 10);
    const file = path.join(tmp, 'w.zip');
    await fs.writeFile(file, zip);
    await run('unzip', ['-tq', file]);
    const out = path.join(tmp, 'unzipped');
    await run('unzip', ['-q', file, '-d', out]);
    expect(await fs.readFile(path.join(out, 'diagnostics.json'), 'utf8')).toBe('{"a":1}\n');
    expect((await fs.readFile(path.join(out, 'logs/agent.log'))).equals(big)).toBe(true);
    expect(await fs.readFile(path.join(out, 'notes/été.txt'), 'utf8')).toBe('');
  });
});
