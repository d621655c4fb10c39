// An OpenAPI 3.1 document made from the routes a server registered (collect.ts)
// and the schemas it validates them with, plus what src/api/openapi/ says of the
// API (credentials, Ferry's additions, answers that are no JSON). TypeBox schemas
// are JSON Schema 2020-12, OpenAPI 3.1's dialect: they go in as they are, less
// TypeBox's hidden keys; a schema with an `$id` becomes one of components/schemas.
import type { FastifySchema } from 'fastify';
import type { ApiDescription } from '../../api/openapi/types.js';
import { openApiPath, routeKey, type CollectedRoute } from './collect.js';

export type Json = Record<string, unknown>;

export interface Parameter { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: Json; 'x-ferry-addition'?: true }

export interface Operation {
  operationId: string;
  summary?: string;
  tags: string[];
  parameters: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: Json }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Json }> }>;
  security: Record<string, string[]>[];
  'x-ferry-addition'?: true;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
}

export const OPENAPI_PATH = '/openapi.json';
export const PAGE_PATH = '/docs/api';
const OWN = new Set([OPENAPI_PATH, PAGE_PATH]);
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** A schema as plain JSON: no hidden keys, and each `$id`'d schema replaced by a $ref to its one copy in components. */
function plain(schema: unknown, components: Record<string, Json>): Json {
  const lift = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(lift);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = lift(v);
    if (typeof out.$id !== 'string') return out;
    const { $id, ...rest } = out;
    const name = ($id as string).replace(/[^A-Za-z0-9._-]/g, '_');
    components[name] = rest;
    return { $ref: `#/components/schemas/${name}` };
  };
  return lift(JSON.parse(JSON.stringify(schema ?? {}))) as Json;
}

/** The properties of an object schema (params, querystring, headers) as parameters. */
function parameters(schema: unknown, where: Parameter['in'], components: Record<string, Json>, added: string[] = []): Parameter[] {
  if (!schema) return [];
  const s = plain(schema, components);
  const required = new Set((s.required as string[] | undefined) ?? []);
  return Object.entries((s.properties as Record<string, Json> | undefined) ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: p,
    ...(added.includes(name) ? { 'x-ferry-addition': true as const } : {}),
  }));
}

/** Tag of a path: its first segment that is not a version (`/v1/packages/...`: packages). */
export const tagOf = (path: string) => path.split('/').find((s) => s && !/^v\d/.test(s)) ?? 'root';

function operation(route: CollectedRoute, path: string, api: ApiDescription, components: Record<string, Json>): Operation {
  const key = routeKey(route.method, path);
  const schema: FastifySchema = route.schema ?? {};
  const addition = api.additions[key];
  const responses: Operation['responses'] = {};
  for (const [status, s] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
    responses[status] = { description: status.startsWith('2') ? 'Success' : 'The answer', content: { 'application/json': { schema: plain(s, components) } } };
  }
  const answer = api.answers[key];
  if (answer) responses[String(answer.status)] = { description: answer.why, ...(answer.type ? { content: { [answer.type]: { schema: {} } } } : {}) };
  responses.default = { description: 'An error: `{code, message}` with the status that fits', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const bodyType = api.bodyTypes?.[key] ?? 'application/json';
  const requestBody = schema.body ? { required: true, content: { [bodyType]: { schema: plain(schema.body, components) } } } : undefined;
  // Fields Ferry added to a body or an answer of the contract carry the marker too.
  if (addition && addition !== true && addition.fields) {
    const schemas = [requestBody?.content[bodyType]?.schema, ...Object.entries(responses).filter(([s]) => s.startsWith('2')).map(([, r]) => r.content?.['application/json']?.schema)];
    for (const s of schemas) {
      const props = (s?.properties ?? {}) as Record<string, Json>;
      for (const f of addition.fields) if (props[f]) props[f]['x-ferry-addition'] = true;
    }
  }
  return {
    operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    ...(api.summaries[key] ? { summary: api.summaries[key] } : {}),
    tags: [tagOf(path)],
    parameters: [
      ...parameters(schema.params, 'path', components),
      ...parameters(schema.querystring, 'query', components, addition === true || !addition ? [] : addition.query ?? []),
      ...parameters(schema.headers, 'header', components),
    ],
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: api.security(route.method, path),
    ...(addition === true ? { 'x-ferry-addition': true as const } : {}),
  };
}

/** The routes of the API: under its prefix, less the document and its page, with their paths in OpenAPI's form. */
export function apiRoutes(routes: CollectedRoute[], api: ApiDescription): { route: CollectedRoute; path: string }[] {
  return routes
    .filter((r) => r.method !== 'HEAD' && !OWN.has(r.url) && r.url.startsWith(api.prefix) && (api.prefix === '' || /^[/]|^$/.test(r.url.slice(api.prefix.length))))
    .map((route) => ({ route, path: openApiPath(route.url.slice(api.prefix.length) || '/') }));
}

export function buildDocument(routes: CollectedRoute[], api: ApiDescription, version: string): OpenApiDocument {
  const schemas: Record<string, Json> = {};
  const paths: OpenApiDocument['paths'] = {};
  for (const { route, path } of apiRoutes(routes, api)) {
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, path, api, schemas);
  }
  schemas.Error = plain(api.error, schemas);
  const tags = [...new Set(Object.keys(paths).map(tagOf))].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: { title: api.title, version, description: api.description },
    servers: [{ url: api.prefix || '/' }],
    tags,
    paths,
    components: { schemas, securitySchemes: api.securitySchemes },
  };
}
