// Delivery of a Package's form response at finalize: metadata.json / .csv / .xml
// in the Package root (real objects with file rows, so they are listed,
// downloadable, in the ZIP and in cloud transfers) and the answers for the
// notification e-mail. The objects are written before the finalize transaction,
// under keys fixed per Package and format, and their rows are inserted inside
// it: a crash leaves either no metadata file or all of them, and a retried
// finalize writes the same objects again.
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { FilesTable, PackagesTable } from '../db/schema.js';
import type { FieldValue } from '../../api/hosted/forms.js';
import { HttpError } from '../errors.js';
import { newOrderedId } from '../ids.js';
import { answeredForm, answersOf, type AnsweredForm, type Answers } from './formResponses.js';

type FileFormat = 'json' | 'csv' | 'xml';
const FILE_FORMATS: FileFormat[] = ['json', 'csv', 'xml'];

export interface MetadataFile { format: FileFormat; key: string; bytes: Buffer }
export interface PreparedMetadata {
  files: MetadataFile[];
  /** label and value of every field, for the e-mail body; empty when email_body is not a delivery format. */
  emailLines: { label: string; value: string }[];
}

const NONE: PreparedMetadata = { files: [], emailLines: [] };

type Pkg = Pick<PackagesTable, 'id' | 'name' | 'sender' | 'custom_metadata_id'>;
interface Doc { form: AnsweredForm; answers: Answers; responseId: string; submittedAt: string; pkg: Pkg }

const text = (v: FieldValue | undefined): string => (v === null || v === undefined ? '' : Array.isArray(v) ? v.join(', ') : String(v));
/** XML 1.0 cannot hold lone surrogates; values never hold control characters (formFields.ts). */
const xmlEscape = (s: string) =>
  s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!).replace(/\r/g, '&#13;');
/** A spreadsheet must not run an uploader's text as a formula: such cells get a leading apostrophe. */
const csvCell = (s: string, isNumber = false) => `"${(!isNumber && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s).replace(/"/g, '""')}"`;

export function metadataJson(d: Doc): string {
  const doc = {
    response_id: d.responseId,
    form_name: d.form.name,
    package_id: d.pkg.id,
    package_name: d.pkg.name,
    sender: d.pkg.sender,
    submitted_at: d.submittedAt,
    fields: d.form.fields.map((f) => ({ name: f.name, label: f.label, type: f.type, value: d.answers[f.name] ?? null })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** One header row of field names and one row of values (RFC 4180, CRLF): files of many Packages append into one sheet. */
export function metadataCsv(d: Doc): string {
  const names = d.form.fields.map((f) => csvCell(f.name));
  const values = d.form.fields.map((f) => csvCell(text(d.answers[f.name]), f.type === 'number'));
  return `${names.join(',')}\r\n${values.join(',')}\r\n`;
}

export function metadataXml(d: Doc): string {
  const attr = (k: string, v: string) => `${k}="${xmlEscape(v)}"`;
  const lines = d.form.fields.map((f) => {
    const v = d.answers[f.name];
    const head = `  <field ${attr('name', f.name)} ${attr('label', f.label)} ${attr('type', f.type)}`;
    if (Array.isArray(v)) return `${head}>${v.map((o) => `<value>${xmlEscape(o)}</value>`).join('')}</field>`;
    return `${head}>${xmlEscape(text(v))}</field>`;
  });
  const root = ['response_id', d.responseId, 'form_name', d.form.name, 'package_id', d.pkg.id, 'submitted_at', d.submittedAt];
  const attrs = [];
  for (let i = 0; i < root.length; i += 2) attrs.push(attr(root[i]!, root[i + 1]!));
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<metadata ${attrs.join(' ')}>`, ...lines, '</metadata>', ''].join('\n');
}

const RENDER: Record<FileFormat, (d: Doc) => string> = { json: metadataJson, csv: metadataCsv, xml: metadataXml };

/**
 * Renders the Package's response in its delivery formats and writes the files'
 * objects. The content depends only on the response and the Package, so a
 * finalize that is retried (or races another) writes the same bytes.
 */
export async function prepareMetadata(ctx: HostedContext, pkg: Pkg): Promise<PreparedMetadata> {
  if (!pkg.custom_metadata_id) return NONE;
  const r = await ctx.db.selectFrom('form_responses').selectAll().where('id', '=', pkg.custom_metadata_id).executeTakeFirst();
  if (!r) return NONE;
  const form = answeredForm(r);
  const doc: Doc = { form, answers: answersOf(r), responseId: r.id, submittedAt: r.created_at, pkg };
  const files = FILE_FORMATS.filter((f) => form.delivery_formats.includes(f)).map((format) => ({
    format,
    key: `packages/${pkg.id}/form-metadata.${format}`,
    bytes: Buffer.from(RENDER[format](doc), 'utf8'),
  }));
  try {
    for (const f of files) await ctx.storage.putObject(f.key, f.bytes);
  } catch (err) {
    ctx.log.error({ err, packageId: pkg.id }, 'writing the metadata files failed');
    throw new HttpError(503, 'storage_unavailable', 'the metadata files could not be written; finalize again');
  }
  const emailLines = form.delivery_formats.includes('email_body') ? form.fields.map((f) => ({ label: f.label, value: text(doc.answers[f.name]) })) : [];
  return { files, emailLines };
}

/**
 * The file rows of the metadata files, in the Package root, inside the finalize
 * transaction. Named metadata.<format>; when an uploaded file has one of those
 * names, all take a suffix: "metadata (1).json" and so on.
 */
export async function insertMetadataFiles(trx: Db, packageId: string, prepared: PreparedMetadata, now: string): Promise<void> {
  if (prepared.files.length === 0) return;
  const taken = new Set(
    (await trx.selectFrom('files').select('name').where('package_id', '=', packageId).where('path', '=', '').execute()).map((f) => f.name.toLowerCase()),
  );
  let suffix = '';
  for (let n = 1; prepared.files.some((f) => taken.has(`metadata${suffix}.${f.format}`)); n++) suffix = ` (${n})`;
  const rows: FilesTable[] = prepared.files.map((f) => ({
    id: newOrderedId('file'),
    package_id: packageId,
    kind: 'file',
    name: `metadata${suffix}.${f.format}`,
    path: '',
    last_modified: now,
    size: f.bytes.length,
    chunk_size: 0,
    object_key: f.key,
    upload_id: null,
    state: 'finalized',
    virus_detected: 0,
    created_at: now,
    updated_at: now,
  }));
  await trx.insertInto('files').values(rows).execute();
}
