// The OpenAPI documents the service and the agent serve (docs/openapi.md): valid
// OpenAPI 3.1 whose schemas compile, every route under the schema rule, Ferry's
// additions as the docs list them, the docs' examples valid, and the page.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../../helpers/hosted.js';
import { startTestAgent, type TestAgent } from '../../helpers/agent.js';
import { repoRoot } from '../../helpers/cli.js';
import { additionsInDocs, examplesInDocs, matchRoutes } from '../../helpers/openapiDocs.js';
import type { Json, OpenApiDocument } from '../../../src/http/openapi/document.js';
import { schemaProblems } from '../../../src/http/openapi/rules.js';
import { HOSTED_API } from '../../../src/api/openapi/hosted.js';
import { AGENT_API } from '../../../src/api/openapi/agent.js';
import type { ApiDescription } from '../../../src/api/openapi/types.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const pkgVersion = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version as string;
const LOCAL_KEY = 'openapi-test-local-key';

let svc: TestService;
let agent: TestAgent;
const docs: Record<'hosted' | 'agent', { doc: OpenApiDocument; api: ApiDescription; base: string; page: string }> = {} as never;

beforeAll(async () => {
  svc = await startTestService();
  // With a local API key: the document and its page are still open without it.
  agent = await startTestAgent(svc, { 'local-api-key': LOCAL_KEY });
  const agentBase = new URL(agent.url).origin;
  for (const [name, base, api] of [['hosted', svc.url, HOSTED_API], ['agent', agentBase, AGENT_API]] as const) {
    const r = await fetch(`${base}/openapi.json`);
    expect(r.status).toBe(200);
    const page = await fetch(`${base}/docs/api`);
    expect(page.status).toBe(200);
    docs[name] = { doc: (await r.json()) as OpenApiDocument, api, base, page: await page.text() };
  }
});
afterAll(async () => {
  await agent?.close();
  await svc?.close();
});

/** Every schema of a document, with where it is. */
function schemasOf(doc: OpenApiDocument): [string, Json][] {
  const out: [string, Json][] = Object.entries(doc.components.schemas).map(([n, s]) => [`components/${n}`, s]);
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      for (const prm of op.parameters) out.push([`${m} ${p} ${prm.in} ${prm.name}`, prm.schema]);
      for (const [t, c] of Object.entries(op.requestBody?.content ?? {})) out.push([`${m} ${p} body ${t}`, c.schema]);
      for (const [s, r] of Object.entries(op.responses)) for (const [t, c] of Object.entries(r.content ?? {})) out.push([`${m} ${p} ${s} ${t}`, c.schema]);
    }
  }
  return out;
}

/** An Ajv of the 2020-12 dialect that knows the document's components (its $refs point there). */
function compilerFor(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components });
  return (schema: Json) => ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
}

describe.each(['hosted', 'agent'] as const)('the %s document', (name) => {
  test('is OpenAPI 3.1 in shape, with the package version, unique operation ids and every $ref resolving', () => {
    const { doc } = docs[name];
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkgVersion);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(40);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    for (const [p, ops] of Object.entries(doc.paths)) {
      expect(p).toMatch(/^\//);
      for (const op of Object.values(ops)) expect(Object.keys(op.responses).length).toBeGreaterThan(0);
    }
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const target = ref.replace(/^#\//, '').split('/').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
      expect(target, ref).toBeTypeOf('object');
    }
    for (const op of Object.values(doc.paths).flatMap((ops) => Object.values(ops))) {
      for (const req of op.security) for (const scheme of Object.keys(req)) expect(doc.components.securitySchemes[scheme], scheme).toBeDefined();
    }
  });

  test('has only schemas that compile as JSON Schema 2020-12', () => {
    const compile = compilerFor(docs[name].doc);
    const all = schemasOf(docs[name].doc);
    expect(all.length).toBeGreaterThan(100);
    for (const [where, schema] of all) expect(() => compile(schema), where).not.toThrow();
  });

  test('keeps the schema rule on every route (params, body and success answer described)', () => {
    expect(schemaProblems(docs[name].doc, docs[name].api)).toEqual([]);
  });

  test("marks Ferry's additions as docs/ lists them with +", () => {
    const { doc, api } = docs[name];
    const file = path.join(repoRoot, 'docs', name === 'hosted' ? 'hosted-api.md' : 'agent-api.md');
    const listed = additionsInDocs(file, doc);
    expect(listed.unknown, 'routes the docs table names that the document lacks').toEqual([]);
    const routes = Object.entries(api.additions).filter(([, a]) => a === true).map(([k]) => k);
    expect([...listed.routes].sort()).toEqual(routes.sort());
    const query = Object.entries(api.additions).flatMap(([k, a]) => (a === true ? [] : (a.query ?? []).map((q) => `${k}?${q}`)));
    expect([...listed.query].flatMap(([k, names]) => [...names].map((q) => `${k}?${q}`)).sort()).toEqual(query.sort());
    // The document carries the marker where the table puts it.
    const marked = Object.entries(doc.paths).flatMap(([p, ops]) => Object.entries(ops).filter(([, op]) => op['x-ferry-addition']).map(([m]) => `${m.toUpperCase()} ${p}`));
    expect(marked.sort()).toEqual(routes.sort());
    const markedQuery = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).flatMap(([m, op]) => op.parameters.filter((q) => q['x-ferry-addition']).map((q) => `${m.toUpperCase()} ${p}?${q.name}`)),
    );
    expect(markedQuery.sort()).toEqual(query.sort());
    // Each added field is a field of the route's body or success answer, and marked there.
    for (const [key, a] of Object.entries(api.additions)) {
      if (a === true) continue;
      const [method, p] = key.split(' ') as [string, string];
      const op = doc.paths[p]![method.toLowerCase()]!;
      const schemas = [op.requestBody?.content['application/json']?.schema, ...Object.entries(op.responses).filter(([s]) => s.startsWith('2')).map(([, r]) => r.content?.['application/json']?.schema)];
      for (const f of a.fields ?? []) {
        expect(schemas.some((s) => ((s?.properties ?? {}) as Record<string, Json>)[f]?.['x-ferry-addition'] === true), `${key} ${f}`).toBe(true);
      }
    }
  });

  test('is shown on a page with a heading and a link for each operation, no script, under its CSP', () => {
    const { doc, page } = docs[name];
    expect(page).not.toMatch(/<script/i);
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
    for (const op of Object.values(doc.paths).flatMap((ops) => Object.values(ops))) {
      expect(page).toContain(`<h3 id="${op.operationId}">`);
      expect(page).toContain(`href="#${op.operationId}"`);
    }
    expect(page).toContain('href="/openapi.json"');
  });
});

test('the page is served with a CSP that allows its one stylesheet by hash and nothing else', async () => {
  for (const { base, page } of Object.values(docs)) {
    const r = await fetch(`${base}/docs/api`);
    const csp = r.headers.get('content-security-policy')!;
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(csp).toMatch(/default-src 'none'/);
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)![1]!;
    const { createHash } = await import('node:crypto');
    expect(csp).toContain(`style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(csp).not.toMatch(/unsafe-inline|script-src/);
  }
});

test("the agent's document needs no API key, yet keeps the Host check and the rest keeps the key", async () => {
  const { base } = docs.agent;
  expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
  expect((await fetch(`${agent.url}/about`)).status).toBe(401);
  // fetch() sets Host itself: a foreign one goes by node:http.
  const foreign = await new Promise<number>((resolve, reject) => {
    http.get(`${base}/openapi.json`, { headers: { host: 'evil.example' } }, (res) => resolve(res.resume().statusCode!)).on('error', reject);
  });
  expect(foreign).toBe(403);
});

test('every JSON example in docs/ that follows a line naming a route validates against its operation', () => {
  const { examples } = examplesInDocs(path.join(repoRoot, 'docs'));
  expect(examples.length).toBeGreaterThanOrEqual(8);
  for (const ex of examples) {
    const [method, docsPath] = ex.key.split(' ') as [string, string];
    // The agent's pages name paths under /api/v1 without it; the service's start with /v1 or a page's path.
    const which = ex.file.startsWith('agent-api') ? docs.agent : docs.hosted;
    const keys = matchRoutes(which.doc, method, docsPath);
    expect(keys, `${ex.file}:${ex.line} names ${ex.key}`).toHaveLength(1);
    const [, p] = keys[0]!.split(' ') as [string, string];
    const op = which.doc.paths[p]![method.toLowerCase()]!;
    const status = ex.status ?? Object.keys(op.responses).find((s) => s.startsWith('2'))!;
    const schema = ex.part === 'request' ? op.requestBody?.content['application/json']?.schema : op.responses[status]?.content?.['application/json']?.schema;
    expect(schema, `${ex.file}:${ex.line}: ${ex.key} has a ${ex.part} schema${ex.part === 'response' ? ` for ${status}` : ''}`).toBeDefined();
    const validate = compilerFor(which.doc)(schema!);
    expect(validate(ex.json) ? [] : validate.errors, `${ex.file}:${ex.line}`).toEqual([]);
  }
});

test("the hosted document's credentials are the ones its routes ask for: a GET without any is refused exactly where one is needed", async () => {
  const { doc, base } = docs.hosted;
  const wrong: string[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    const op = ops.get;
    // A Link without its secret answers 404, not 401: whether it exists is not told (hosted-api-notes/authorization-and-input.md).
    if (!op || op.parameters.some((q) => q.in === 'query' && q.required) || p === '/v1/links/{link_id}') continue;
    // Each path parameter an id that exists nowhere, or the first value its schema allows.
    const value = (name: string) => {
      const s = op.parameters.find((q) => q.in === 'path' && q.name === name)!.schema as { anyOf?: { const?: string }[] };
      return s.anyOf?.[0]?.const ?? 'x1';
    };
    const url = base + p.replace(/\{([^}]+)\}/g, (_m, name: string) => value(name));
    const status = (await fetch(url, { redirect: 'manual' }).then(async (r) => (await r.arrayBuffer(), r.status)));
    const open = op.security.length === 0 || op.security.some((req) => Object.keys(req).length === 0);
    if (open === (status === 401)) wrong.push(`GET ${p}: ${status} without a credential, the document says ${JSON.stringify(op.security)}`);
  }
  expect(wrong).toEqual([]);
});
