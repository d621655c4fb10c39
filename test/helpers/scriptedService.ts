// A stand-in for the hosted service in unit tests: every request is recorded
// (method, path, JSON body) and answered by the test's script.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedRequest { method: string; path: string; body: any }
export type Script = (r: ScriptedRequest) => Promise<{ status: number; json?: unknown }> | { status: number; json?: unknown };

export interface ScriptedService {
  url: string;
  seen: ScriptedRequest[];
  close(): Promise<void>;
}

export async function scriptedService(script: Script): Promise<ScriptedService> {
  const seen: ScriptedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const c of req) text += c;
    const r = { method: req.method ?? '', path: req.url ?? '', body: text ? JSON.parse(text) : undefined };
    seen.push(r);
    const a = await script(r);
    res.writeHead(a.status, { 'content-type': 'application/json' });
    res.end(a.json === undefined ? '' : JSON.stringify(a.json));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
