// The agent's per-file calls against a scripted HTTP service: the first go
// alone, those that come meanwhile go together, each file gets its own outcome,
// and a service without the batch route gets one request per file.
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedService, type Script, type ScriptedRequest as Req, type ScriptedService } from '../../helpers/scriptedService.js';
import { HostedApiError, HostedHttp } from '../../../src/client/http.js';
import pino from 'pino';
import { FileCalls } from '../../../src/agent/engine/fileCalls.js';
import { Outages } from '../../../src/agent/engine/outages.js';

let service: ScriptedService | undefined;
let hosted: HostedHttp | undefined;
let outages: Outages | undefined;
afterEach(async () => {
  await hosted?.close();
  await outages?.close();
  await service?.close();
  service = hosted = outages = undefined;
});

/** A service that answers by `script` and records every request. */
async function serve(script: Script): Promise<{ seen: Req[]; calls: FileCalls }> {
  service = await scriptedService(script);
  const seen = service.seen;
  hosted = new HostedHttp(service.url);
  const policy = { attempts: 2, baseMs: 0, maxMs: 0, retryForMs: 60_000 };
  outages = new Outages(policy, pino({ level: 'silent' }), 1000);
  const calls = new FileCalls(hosted, 'pkg_1', 'token', outages.target('service', hosted.baseUrl), { policy, signal: new AbortController().signal });
  return { seen, calls };
}

const body = (size: number) => ({ chunk_extras: [{ part_number: '1', etag: 'e' }], file_extras: { upload_id: 'u' }, size });
const single = (path: string) => /\/files\/([^/]+)\/finalize$/.exec(path)?.[1];
const batched = (r: Req) => (r.path.endsWith('/finalize_files') ? (r.body.files as { file_id: string }[]).map((f) => f.file_id) : undefined);
const outcomes = (files: { file_id: string }[], status = 204) => ({ results: files.map((f) => ({ file_id: f.file_id, status })) });

describe('file finalizes', () => {
  it('sends the first finalizes alone and those that come while they are under way together', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seen, calls } = await serve(async (r) => {
      if (single(r.path)) await gate;
      return single(r.path) ? { status: 204 } : { status: 200, json: outcomes(r.body.files) };
    });
    const first = [calls.finalize('f1', body(1)), calls.finalize('f2', body(2))];
    await expect.poll(() => seen.length).toBe(2);
    const rest = ['f3', 'f4', 'f5'].map((id) => calls.finalize(id, body(3)));
    release();
    await Promise.all([...first, ...rest]);
    expect(seen.map((r) => single(r.path) ?? batched(r))).toEqual(['f1', 'f2', ['f3', 'f4', 'f5']]);
    expect(seen[2]!.body.files[0]).toEqual({ file_id: 'f3', ...body(3) });
  });

  it('gives each file its own outcome: a refusal rejects that file only, a 503 or a missing answer goes again alone', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seen, calls } = await serve(async (r) => {
      const id = single(r.path);
      if (id === 'hold') await gate;
      if (id) return { status: 204 };
      return {
        status: 200,
        json: { results: [
          { file_id: 'ok', status: 204 },
          { file_id: 'short', status: 409, code: 'size_mismatch', message: 'the named parts hold 3 bytes, not 9' },
          { file_id: 'busy', status: 503, code: 'unavailable', message: 'try later' },
        ] },
      };
    });
    const held = [calls.finalize('hold', body(1)), calls.finalize('hold', body(1))];
    await expect.poll(() => seen.length).toBe(2);
    const [ok, short, busy, lost] = ['ok', 'short', 'busy', 'lost'].map((id) => calls.finalize(id, body(9)));
    release();
    await Promise.all(held);
    await expect(ok).resolves.toBeUndefined();
    await expect(short).rejects.toBeInstanceOf(HostedApiError);
    await expect(short).rejects.toMatchObject({ status: 409, code: 'size_mismatch', message: 'the named parts hold 3 bytes, not 9' });
    await expect(busy).resolves.toBeUndefined();
    await expect(lost).resolves.toBeUndefined();
    const order = seen.map((r) => single(r.path) ?? batched(r));
    expect(order.slice(0, 3)).toEqual(['hold', 'hold', ['ok', 'short', 'busy', 'lost']]);
    expect(order.slice(3).sort()).toEqual(['busy', 'lost']);
  });

  it('finalizes file by file once the service answers 404 to the batch route, and does not ask for it again', async () => {
    let release!: () => void;
    let gate = new Promise<void>((r) => (release = r));
    const { seen, calls } = await serve(async (r) => {
      if (!single(r.path)) return { status: 404, json: { code: 'not_found', message: 'no route' } };
      if (single(r.path)!.startsWith('hold')) await gate;
      return { status: 204 };
    });
    const burst = async (n: number) => {
      const before = seen.length;
      const held = [calls.finalize(`hold${n}a`, body(1)), calls.finalize(`hold${n}b`, body(1))];
      await expect.poll(() => seen.length).toBe(before + 2);
      const rest = [1, 2, 3].map((i) => calls.finalize(`f${n}.${i}`, body(1)));
      release();
      await Promise.all([...held, ...rest]);
      gate = new Promise<void>((r) => (release = r));
    };
    await burst(1);
    await burst(2);
    const batches = seen.filter((r) => batched(r));
    expect(batches).toHaveLength(1);
    expect(seen.filter((r) => single(r.path)).map((r) => single(r.path)).sort()).toEqual(
      ['hold1a', 'hold1b', 'f1.1', 'f1.2', 'f1.3', 'hold2a', 'hold2b', 'f2.1', 'f2.2', 'f2.3'].sort(),
    );
  });
});

describe('file registrations', () => {
  const entry = (name: string) => ({ kind: 'file' as const, name, path: '', last_modified: '2024-05-01T10:00:00.000Z', size: 5 });
  const answer = (name: string) => ({ create_blueprint: null, file: { id: `file_${name}`, name }, max_chunk_count: 1, max_chunk_size: 1, min_chunk_size: 1 });
  const registered = (r: Req) => (r.path.endsWith('/register_files') ? (r.body.files as { name: string }[]).map((f) => f.name) : /\/files(\?|$)/.test(r.path) ? r.body.name : undefined);

  it('sends registrations that come together as one request, each with its count, and gives each entry its own outcome', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { seen, calls } = await serve(async (r) => {
      if (r.path.endsWith('/register_files')) {
        return {
          status: 200,
          json: { results: [
            { status: 201, registration: answer('ok') },
            { status: 409, code: 'duplicate_path', message: '"taken" is already in the package' },
            { status: 503, code: 'unavailable', message: 'try later' },
            { status: 201 },
          ] },
        };
      }
      if (r.body.name === 'hold') await gate;
      return { status: 201, json: answer(r.body.name) };
    });
    const held = [calls.register(entry('hold'), { count: 1 }), calls.register(entry('hold'), { count: 1 })];
    await expect.poll(() => seen.length).toBe(2);
    // The last one also asks for a single PutObject.
    const [ok, taken, busy, lost] = ['ok', 'taken', 'busy', 'lost'].map((n, i) => calls.register(entry(n), { count: i + 1, ...(n === 'lost' ? { single: true } : {}) }));
    release();
    await Promise.all(held);
    await expect(ok).resolves.toEqual(answer('ok'));
    await expect(taken).rejects.toMatchObject({ status: 409, code: 'duplicate_path' });
    await expect(busy).resolves.toEqual(answer('busy'));
    await expect(lost).resolves.toEqual(answer('lost'));
    const batch = seen.find((r) => r.path.endsWith('/register_files'))!;
    expect(batch.body.files.map((f: { name: string; count: number; single?: boolean }) => [f.name, f.count, f.single])).toEqual([
      ['ok', 1, undefined],
      ['taken', 2, undefined],
      ['busy', 3, undefined],
      ['lost', 4, true],
    ]);
    const order = seen.map(registered);
    expect(order.slice(0, 3)).toEqual(['hold', 'hold', ['ok', 'taken', 'busy', 'lost']]);
    expect(order.slice(3).sort()).toEqual(['busy', 'lost']);
    // The ones sent again alone keep their count, and their single.
    const query = (r: { path: string }) => new URL(r.path, 'http://x').searchParams;
    expect(seen.slice(3).map((r) => [query(r).get('count'), query(r).get('single')]).sort()).toEqual([['3', null], ['4', 'true']]);
  });
});
