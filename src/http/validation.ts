// Two validators: bodies are checked strictly (a string is never a number),
// query strings and path params are coerced from text, as they can only be text.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Years 0000 to 9999 in UTC: the instants whose toISOString() is plain `YYYY-...`. */
const MIN_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

function build(opts: Options): Ajv {
  const ajv = new Ajv({ allErrors: false, removeAdditional: true, useDefaults: true, strict: false, ...opts });
  addFormats(ajv);
  // RFC 3339 allows a leap second (23:59:60), which Date cannot hold (the services
  // would meet NaN), and offsets can push year 9999 into 10000, whose ISO text
  // ("+010000-...") no longer sorts with the others. Both answer 400.
  const dateTime = ajv.formats['date-time'] as { validate: (s: string) => boolean; compare: (a: string, b: string) => number | undefined };
  const inRange = (t: number) => t >= MIN_INSTANT && t <= MAX_INSTANT;
  ajv.addFormat('date-time', { ...dateTime, validate: (s: string) => dateTime.validate(s) && inRange(Date.parse(s)) });
  return ajv;
}

const strict = build({ coerceTypes: false });
const coercing = build({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;

/** A strict validator of one body schema (what the IPC handler table checks each request with). */
export const bodyValidator = (schema: object) => strict.compile(schema);
