// The OpenAPI generator and its schema rule on a tiny Fastify server with the same
// collector as the service and the agent (src/http/openapi/): a route added without
// its schemas is reported, `:param` becomes `{param}`, `$id`'d schemas are lifted
// into components once, and the page escapes what it shows.
import Fastify from 'fastify';
import { Type } from 'typebox';
import { describe, expect, test } from 'vitest';
import { registerOpenApi } from '../../src/http/openapi/serve.js';
import { schemaProblems } from '../../src/http/openapi/rules.js';
import type { OpenApiDocument } from '../../src/http/openapi/document.js';
import type { ApiDescription } from '../../src/api/openapi/types.js';

const Thing = Type.Object({ id: Type.String(), name: Type.String() }, { $id: 'Thing' });
const Params = Type.Object({ thing_id: Type.String() });

function api(over: Partial<ApiDescription> = {}): ApiDescription {
  return {
    title: 'Things',
    description: 'A test API',
    prefix: '/api',
    securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } },
    security: () => [{ key: [] }],
    error: Type.Object({ code: Type.String(), message: Type.String() }),
    additions: { 'GET /things/{thing_id}': true },
    answers: {},
    noBody: {},
    summaries: { 'GET /things/{thing_id}': 'One <thing>', 'GET /things': 'Every thing', 'POST /things/{thing_id}/notes': 'Add a note' },
    ...over,
  };
}

/** A server with two good routes and `add` for the route under test; its document as served. */
async function documentOf(description: ApiDescription, add: (app: ReturnType<typeof Fastify>) => void): Promise<OpenApiDocument> {
  const app = Fastify();
  registerOpenApi(app, description);
  await app.register(
    async (scope) => {
      scope.get('/things/:thing_id', { schema: { params: Params, response: { 200: Thing } } }, async () => ({ id: 'a', name: 'b' }));
      scope.get('/things', { schema: { response: { 200: Type.Array(Thing) } } }, async () => []);
      add(scope as unknown as ReturnType<typeof Fastify>);
    },
    { prefix: '/api' },
  );
  try {
    const r = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).toBe(200);
    return r.json() as OpenApiDocument;
  } finally {
    await app.close();
  }
}

describe('the schema rule', () => {
  test('reports a route added without schemas: its path parameter, its body, its answer', async () => {
    const doc = await documentOf(api(), (app) => app.post('/things/:thing_id/notes', async () => ({ ok: true })));
    expect(schemaProblems(doc, api())).toEqual([
      'POST /things/{thing_id}/notes: its path parameter thing_id has no params schema',
      'POST /things/{thing_id}/notes: takes a body but declares no body schema (or says why it takes none)',
      'POST /things/{thing_id}/notes: declares no response schema for its success (or says what it answers instead)',
    ]);
  });

  test('passes the same route with its schemas, or with the reasons its table gives', async () => {
    const withSchemas = await documentOf(api(), (app) =>
      app.post('/things/:thing_id/notes', { schema: { params: Params, body: Type.Object({ text: Type.String() }), response: { 201: Thing } } }, async () => ({ id: 'a', name: 'b' })),
    );
    expect(schemaProblems(withSchemas, api())).toEqual([]);
    const excused = api({ noBody: { 'POST /things/{thing_id}/notes': 'an action' }, answers: { 'POST /things/{thing_id}/notes': { status: 204, why: 'Done.' } } });
    const withReasons = await documentOf(excused, (app) => app.post('/things/:thing_id/notes', { schema: { params: Params } }, async () => undefined));
    expect(schemaProblems(withReasons, excused)).toEqual([]);
  });

  test('reports a route without a summary and a table entry that names no route', async () => {
    const description = api({ summaries: { 'GET /things/{thing_id}': 'One thing' }, answers: { 'DELETE /things': { status: 204, why: 'Gone.' } } });
    const doc = await documentOf(description, () => {});
    expect(schemaProblems(doc, description)).toEqual(['GET /things: has no summary', 'answers names DELETE /things, which is no route']);
  });
});

describe('the document', () => {
  test("is OpenAPI 3.1 with {param} paths, the prefix as its server, one component per $id and Ferry's marker", async () => {
    const doc = await documentOf(api(), () => {});
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: '/api' }]);
    expect(Object.keys(doc.paths).sort()).toEqual(['/things', '/things/{thing_id}']);
    const one = doc.paths['/things/{thing_id}']!.get!;
    expect(one.parameters).toEqual([{ name: 'thing_id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(one.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(doc.paths['/things']!.get!.responses['200']!.content!['application/json']!.schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Thing' } });
    expect(doc.components.schemas.Thing).toEqual({ type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } });
    expect(one['x-ferry-addition']).toBe(true);
    expect(doc.paths['/things']!.get!['x-ferry-addition']).toBeUndefined();
    // The document's own routes are not operations of the API.
    expect(JSON.stringify(doc.paths)).not.toContain('openapi.json');
  });

  test('is shown on a page that escapes what it shows', async () => {
    const app = Fastify();
    registerOpenApi(app, api());
    app.get('/api/things/:thing_id', { schema: { params: Params, response: { 200: Thing } } }, async () => ({ id: 'a', name: 'b' }));
    const page = await app.inject({ method: 'GET', url: '/docs/api' });
    await app.close();
    expect(page.body).toContain('One &lt;thing&gt;');
    expect(page.body).not.toContain('<thing>');
    expect(page.body).toContain("Ferry's addition");
  });
});
