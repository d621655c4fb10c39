// What the OpenAPI generator (src/http/openapi/document.ts) needs to know of an
// API beyond the routes and their schemas: credentials, what Ferry added to the
// contract, and the routes whose answer is not a JSON schema, each with why.
import type { TSchema } from 'typebox';

/** An OpenAPI security requirement: scheme name to scopes (always none here); `{}` stands for "no credential". */
export type Requirement = Record<string, string[]>;

export interface Answer {
  status: number;
  /** The media type of the success answer; absent for a body-less one (204, 101). */
  type?: string;
  /** Why the route has no JSON response schema, in words: it is the answer's description. */
  why: string;
}

export interface ApiDescription {
  title: string;
  description: string;
  /** The routes under this prefix are the API (the document's server URL); the rest of the server is not. */
  prefix: string;
  securitySchemes: Record<string, Record<string, string>>;
  /** The credentials a route takes, as alternatives (OpenAPI's `security`); [] for a public route. */
  security(method: string, path: string): Requirement[];
  /** The body of every error answer. */
  error: TSchema;
  /**
   * Ferry's additions to the contract, by route key (`GET /uploads/{upload_id}/files`): `true` for
   * an added route, else the query parameters and the top-level fields (of the body or the success
   * answer) added to a route of the contract. The docs mark the routes and query parameters with `+`
   * (test/integration/openapi/documents.test.ts compares the two) and the fields in their notes.
   */
  additions: Record<string, true | { query?: string[]; fields?: string[] }>;
  /** Routes whose success answer is not a JSON schema (no content, a page, a file, a stream). */
  answers: Record<string, Answer>;
  /** POST, PUT and PATCH routes that take no body, with why. */
  noBody: Record<string, string>;
  /** Bodies that are not JSON, by route key: their media type. */
  bodyTypes?: Record<string, string>;
  /** One line per operation for the document and its page. */
  summaries: Record<string, string>;
}
