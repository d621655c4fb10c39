// The rule every route of a documented API keeps (docs/openapi.md): what it takes
// is described by a schema, and so is what it answers, or src/api/openapi/ says
// why not. The OpenAPI tests run it on the document each server serves; a route
// added without its schemas is a failing test, not a gap in the document.
import type { ApiDescription } from '../../api/openapi/types.js';
import { routeKey } from './collect.js';
import type { OpenApiDocument } from './document.js';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Each operation that breaks the rule, in words; and each table entry that names no route. */
export function schemaProblems(doc: OpenApiDocument, api: ApiDescription): string[] {
  const problems: string[] = [];
  const keys = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [lower, op] of Object.entries(ops)) {
      const method = lower.toUpperCase();
      const key = routeKey(method, path);
      keys.add(key);
      const params = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!params.includes(name!)) problems.push(`${key}: its path parameter ${name} has no params schema`);
      }
      if (WITH_BODY.has(method) && !op.requestBody && !api.noBody[key]) problems.push(`${key}: takes a body but declares no body schema (or says why it takes none)`);
      const described = Object.entries(op.responses).some(([status, r]) => status.startsWith('2') && r.content?.['application/json']);
      if (!described && !api.answers[key]) problems.push(`${key}: declares no response schema for its success (or says what it answers instead)`);
      if (!op.summary) problems.push(`${key}: has no summary`);
    }
  }
  const tables = { additions: api.additions, answers: api.answers, noBody: api.noBody, summaries: api.summaries };
  for (const [table, entries] of Object.entries(tables)) {
    for (const key of Object.keys(entries)) if (!keys.has(key)) problems.push(`${table} names ${key}, which is no route`);
  }
  return problems;
}
