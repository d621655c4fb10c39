// The client reads a Package's file list a page at a time (the agent's downloads
// and previews go through it), and takes a service without paging as one page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, startTestService, type TestService } from '../../helpers/hosted.js';
import { ownerActor } from '../../helpers/auth.js';
import { createPackage, type Pkg } from '../../helpers/flow.js';
import { insertFileRows } from '../../helpers/fileRows.js';
import { HostedHttp } from '../../../src/client/http.js';
import { listPackageFiles, packageFilesPage } from '../../../src/client/downloads.js';

let svc: TestService;
let pkg: Pkg;
beforeAll(async () => {
  svc = await startTestService();
  pkg = await createPackage(svc, await ownerActor(svc));
  await insertFileRows(svc, pkg.id, Array.from({ length: 12_000 }, (_, i) => ({ id: `file_c${i}`, path: `d${i % 7}`, name: `f${i}`, size: i })));
});
afterAll(async () => {
  await svc?.close();
});

describe('the client of the file list', () => {
  it('reads a Package of 12,000 entries in pages of at most 5000, every entry once, in the list order', async () => {
    const client = new HostedHttp(svc.url);
    const request = vi.spyOn(client, 'request');
    const got = await listPackageFiles(client, pkg.id, pkg.token);
    const whole = await call(svc.url, 'GET', `/v1/packages/${pkg.id}/files`, { headers: pkg.h });
    expect(got).toEqual(whole.body.filter((f: { kind: string }) => !f.kind.startsWith('zip_')));
    expect(request).toHaveBeenCalledTimes(3);
    for (const [, , opts] of request.mock.calls) expect(opts?.query?.limit).toBe(5000);
    await client.close();
  });

  it('pages as asked', async () => {
    const client = new HostedHttp(svc.url);
    const first = await packageFilesPage(client, pkg.id, pkg.token, { limit: 10 });
    const second = await packageFilesPage(client, pkg.id, pkg.token, { limit: 10, after: first.next! });
    expect(first.files).toHaveLength(10);
    expect(second.files).toHaveLength(10);
    expect(second.files[0]!.id).not.toBe(first.files[9]!.id);
    await client.close();
  });

  it('takes the whole array of a service without paging as one last page, without its ZIP entries', async () => {
    const entries = [
      { id: 'f1', kind: 'file', name: 'a.txt', path: '', last_modified: '2024-05-01T10:00:00Z', size: 1, virus_detected: false },
      { id: 'zip_windows', kind: 'zip_windows', name: 'p.zip', path: '', last_modified: '2024-05-01T10:00:00Z', virus_detected: false },
    ];
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(entries)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = new HostedHttp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect(await listPackageFiles(client, 'pkg_x', 'token')).toEqual([entries[0]]);
      await client.close();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
