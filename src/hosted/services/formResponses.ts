// Answers to a Portal's form (made in formSubmit.ts): checked against the fields,
// taken once by the Portal Package created with form_data_id, read back with
// GET /v1/packages/{id}/metadata, deleted with the Package's files.
import type { HostedContext } from '../context.js';
import type { Db } from '../db/open.js';
import type { FormResponsesTable, MetadataFormsTable, PackagesTable, PortalsTable } from '../db/schema.js';
import type { DeliveryFormat, FieldValue, FormField, FormResponse, FormResponseBody } from '../../api/hosted/forms.js';
import { HttpError, badRequest, conflict } from '../errors.js';
import { defaultOf, fieldValue, isEmpty } from './formFields.js';
import { portalForm } from './forms.js';

/** The form as it was answered, kept with the response. */
export interface AnsweredForm { name: string; delivery_formats: DeliveryFormat[]; fields: FormField[] }
export type Answers = Record<string, FieldValue>;

const parse = <T>(json: string): T => JSON.parse(json) as T;
export const answeredForm = (r: Pick<FormResponsesTable, 'form'>) => parse<AnsweredForm>(r.form);
export const answersOf = (r: Pick<FormResponsesTable, 'data'>) => parse<Answers>(r.data);

/** The response as the API shows it; `withHidden` false leaves hidden fields out (an uploader's view). */
export function responseDto(r: FormResponsesTable, withHidden = true): FormResponse {
  const answers = answersOf(r);
  const data: FormResponse['data'] = {};
  for (const f of answeredForm(r).fields) {
    if (!withHidden && f.visibility === 'hidden') continue;
    data[f.name] = { value: answers[f.name] ?? null, label: f.label, type: f.type };
  }
  return { id: r.id, portal_id: r.portal_id, form_id: r.form_id, package_id: r.package_id, created_at: r.created_at, data };
}

/**
 * The stored answers of `body` to `fields`. Unknown names 400 `unknown_field`;
 * each given value is checked for its type; an omitted field takes its default;
 * readonly and hidden fields keep their default (another non-empty value: 400
 * `field_read_only`); a required field left empty: 400 `field_required`.
 */
export function answer(fields: FormField[], body: FormResponseBody): Answers {
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const name of Object.keys(body)) if (!byName.has(name)) throw badRequest(`the form has no field "${name}"`, 'unknown_field');
  const out: Answers = {};
  for (const f of fields) {
    const given = Object.hasOwn(body, f.name) ? body[f.name]!.value : undefined;
    const fallback = defaultOf(f);
    if (f.visibility === 'readonly' || f.visibility === 'hidden') {
      const sent = given === undefined ? undefined : fieldValue(f, given);
      if (sent !== undefined && !isEmpty(sent) && JSON.stringify(sent) !== JSON.stringify(fallback)) {
        throw badRequest(`field "${f.name}" is ${f.visibility}: it keeps its default value`, 'field_read_only');
      }
      out[f.name] = fallback;
      continue;
    }
    const v = given === undefined ? fallback : fieldValue(f, given);
    if (f.visibility === 'required' && isEmpty(v)) throw badRequest(`field "${f.name}" (${f.label}) is required`, 'field_required');
    out[f.name] = v;
  }
  return out;
}

/**
 * The response a new Portal Package takes (form_data_id): one made for the
 * Portal's current form and not taken yet. Required while the form is enabled.
 * Check here; claim it with claimResponse inside the Package's transaction.
 */
export async function responseForPackage(db: Db, portal: PortalsTable, formDataId: string | undefined): Promise<FormResponsesTable | undefined> {
  const form: MetadataFormsTable | undefined = await portalForm(db, portal.id);
  if (formDataId === undefined) {
    if (form && form.disabled === 0) throw badRequest('this Portal requires its form: send form_data_id (POST /v1/portals/{portal_id}/form/responses makes one)', 'form_data_required');
    return undefined;
  }
  const r = await db.selectFrom('form_responses').selectAll().where('id', '=', formDataId).executeTakeFirst();
  if (!r || !form || r.portal_id !== portal.id || r.form_id !== form.id) throw badRequest("form_data_id names no response to this Portal's form", 'invalid_form_data_id');
  if (r.package_id !== null) throw conflict('this form response belongs to another Package already', 'form_data_used');
  return r;
}

/** Takes the response for the Package; 409 when another Package took it meanwhile. */
export async function claimResponse(db: Db, responseId: string, packageId: string): Promise<void> {
  const r = await db.updateTable('form_responses').set({ package_id: packageId }).where('id', '=', responseId).where('package_id', 'is', null).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw conflict('this form response belongs to another Package already', 'form_data_used');
}

/** What a response feeds the Package: its package_name, package_description and sender_email answers, when not empty. */
export function packageFields(r: FormResponsesTable): { name?: string; description?: string; sender?: string } {
  const answers = answersOf(r);
  const out: { name?: string; description?: string; sender?: string } = {};
  for (const f of answeredForm(r).fields) {
    const v = answers[f.name];
    if (typeof v !== 'string' || v === '') continue;
    if (f.type === 'package_name') out.name = v;
    if (f.type === 'package_description') out.description = v;
    if (f.type === 'sender_email') out.sender = v;
  }
  return out;
}

/** GET /v1/packages/{id}/metadata. */
export async function packageMetadata(ctx: HostedContext, pkg: PackagesTable): Promise<FormResponse> {
  const r = pkg.custom_metadata_id
    ? await ctx.db.selectFrom('form_responses').selectAll().where('id', '=', pkg.custom_metadata_id).executeTakeFirst()
    : undefined;
  if (!r) throw new HttpError(404, 'not_found', 'this Package has no custom metadata');
  return responseDto(r);
}

/** A response no Package took is dropped after this long: it is a one-use ticket, not a record. */
export const UNUSED_RESPONSE_TTL_MS = 7 * 24 * 3600 * 1000;

/** Deletes responses that no Package took within UNUSED_RESPONSE_TTL_MS; answers how many. */
export async function sweepUnusedResponses(ctx: HostedContext, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - UNUSED_RESPONSE_TTL_MS).toISOString();
  const r = await ctx.db.deleteFrom('form_responses').where('package_id', 'is', null).where('created_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}
