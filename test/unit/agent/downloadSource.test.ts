// A download's file URLs against a scripted HTTP service: the first go alone,
// those asked for meanwhile go together in one `download_urls` request, each file
// gets its own outcome, and a service without the route gets one request per file.
import { afterEach, expect, it } from 'vitest';
import { scriptedService, type Script, type ScriptedRequest as Req, type ScriptedService } from '../../helpers/scriptedService.js';
import { HostedApiError, HostedHttp } from '../../../src/client/http.js';
import { DownloadSource } from '../../../src/agent/engine/downloadSource.js';

let service: ScriptedService | undefined;
let hosted: HostedHttp | undefined;
afterEach(async () => {
  await hosted?.close();
  await service?.close();
  service = hosted = undefined;
});

async function serve(script: Script): Promise<{ seen: Req[]; source: DownloadSource }> {
  service = await scriptedService(script);
  const seen = service.seen;
  hosted = new HostedHttp(service.url);
  const link = { linkId: 'lnk_1', secret: 's', password: null, packageId: 'pkg_1', packageToken: 'token' };
  return { seen, source: new DownloadSource(hosted, link, () => undefined) };
}

const alone = (path: string) => /\/files\/([^/]+)\/download$/.exec(path)?.[1];
const signal = () => new AbortController().signal;

it('asks for the first URLs alone and for those asked meanwhile in one download_urls request, each with its own outcome', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { seen, source } = await serve(async (r) => {
    const one = alone(r.path);
    if (one) {
      await gate;
      return { status: 200, json: { method: 'GET', url: `https://store/${one}` } };
    }
    const files = r.body.files as { file_id: string }[];
    return { status: 200, json: { results: files.map(({ file_id }) => (file_id === 'gone' ? { file_id, status: 404, code: 'not_found', message: 'file not found' } : { file_id, status: 200, url: `https://store/${file_id}` })) } };
  });
  const first = [source.fileUrl('f1', signal()), source.fileUrl('f2', signal())];
  await expect.poll(() => seen.length).toBe(2);
  const later = ['f3', 'f4', 'gone', 'f5'].map((id) => source.fileUrl(id, signal()).catch((e: unknown) => e));
  release();
  expect(await Promise.all(first)).toEqual(['https://store/f1', 'https://store/f2']);
  const got = await Promise.all(later);
  expect(got.filter((x) => typeof x === 'string')).toEqual(['https://store/f3', 'https://store/f4', 'https://store/f5']);
  const refused = got[2] as HostedApiError;
  expect(refused).toBeInstanceOf(HostedApiError);
  expect([refused.status, refused.code]).toEqual([404, 'not_found']);
  const batches = seen.filter((r) => r.path === '/v1/packages/pkg_1/download_urls');
  expect(batches.map((r) => r.body.files.map((f: { file_id: string }) => f.file_id))).toEqual([['f3', 'f4', 'gone', 'f5']]);
  expect(seen).toHaveLength(3);
});

it('falls back to one request per file where the service answers 404 to download_urls', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { seen, source } = await serve(async (r) => {
    const one = alone(r.path);
    if (!one) return { status: 404, json: { code: 'not_found', message: 'no route' } };
    await gate;
    return { status: 200, json: { method: 'GET', url: `https://store/${one}` } };
  });
  const first = [source.fileUrl('f1', signal()), source.fileUrl('f2', signal())];
  await expect.poll(() => seen.length).toBe(2);
  const later = [source.fileUrl('f3', signal()), source.fileUrl('f4', signal())];
  release();
  expect(await Promise.all([...first, ...later])).toEqual(['https://store/f1', 'https://store/f2', 'https://store/f3', 'https://store/f4']);
  expect(seen.filter((r) => r.path.endsWith('/download_urls'))).toHaveLength(1);
  expect(seen.filter((r) => alone(r.path))).toHaveLength(4);
});

it('gives up a URL whose transfer was stopped, without failing the others asked with it', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const { source } = await serve(async (r) => {
    await gate;
    const one = alone(r.path);
    return one ? { status: 200, json: { method: 'GET', url: `https://store/${one}` } } : { status: 200, json: { results: r.body.files.map(({ file_id }: { file_id: string }) => ({ file_id, status: 200, url: `https://store/${file_id}` })) } };
  });
  const stop = new AbortController();
  const kept = source.fileUrl('f1', signal());
  const stopped = source.fileUrl('f2', stop.signal);
  stop.abort(new Error('paused'));
  await expect(stopped).rejects.toThrow('paused');
  release();
  expect(await kept).toBe('https://store/f1');
});
