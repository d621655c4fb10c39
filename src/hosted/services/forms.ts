// Custom metadata forms of Portals and the Team's form templates: create, read,
// full update, delete, and the fields an uploader sees (custom_metadata).
import type { HostedContext } from '../context.js';
import { lockRow } from '../db/dialect.js';
import type { Db } from '../db/open.js';
import type { MetadataFormsTable, PortalsTable } from '../db/schema.js';
import type { CreateFormBody, DeliveryFormat, FormField, FormTemplate, MetadataForm, UpdateFormBody } from '../../api/hosted/forms.js';
import type { UserPrincipal } from '../auth/credentials.js';
import { requireRole, teamRole } from '../auth/credentials.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { normalizeFields } from './formFields.js';

export const ADMINS = ['owner', 'admin'] as const;

const parse = <T>(json: string, fallback: T): T => {
  try {
    return JSON.parse(json) as T;
  } catch {
    return fallback;
  }
};
export const fieldsOf = (row: Pick<MetadataFormsTable, 'fields'>) => parse<FormField[]>(row.fields, []);
export const formatsOf = (row: Pick<MetadataFormsTable, 'delivery_formats'>) => parse<DeliveryFormat[]>(row.delivery_formats, []);
const dedupe = (formats: DeliveryFormat[]) => JSON.stringify([...new Set(formats)]);

export const formDto = (row: MetadataFormsTable): MetadataForm => ({
  id: row.id,
  team_id: row.team_id,
  portal_id: row.portal_id!,
  name: row.name,
  delivery_formats: formatsOf(row),
  form_template_id: row.form_template_id,
  disabled: row.disabled === 1,
  fields: fieldsOf(row),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const templateDto = (row: MetadataFormsTable): FormTemplate => ({
  id: row.id,
  team_id: row.team_id,
  name: row.name,
  delivery_formats: formatsOf(row),
  disabled: row.disabled === 1,
  fields: fieldsOf(row),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The form of a Portal, enabled or not. */
export async function portalForm(db: Db, portalId: string): Promise<MetadataFormsTable | undefined> {
  return db.selectFrom('metadata_forms').selectAll().where('portal_id', '=', portalId).executeTakeFirst();
}

/** A form (template: false) or template (true) the caller may reach, checked against `allowed` roles; 404 otherwise. */
export async function memberForm(ctx: HostedContext, who: UserPrincipal, id: string, template: boolean, allowed?: readonly ('owner' | 'admin' | 'member')[]): Promise<MetadataFormsTable> {
  const row = await ctx.db.selectFrom('metadata_forms').selectAll().where('id', '=', id).executeTakeFirst();
  const what = template ? 'form template' : 'form';
  if (!row || (row.portal_id === null) !== template) throw notFound(what);
  const role = await teamRole(ctx, who, row.team_id, what);
  if (allowed) requireRole(role, [...allowed]);
  return row;
}

/** One form per Portal: a second POST answers 409 `form_exists` (change it with PUT). */
export async function createForm(ctx: HostedContext, portal: PortalsTable, body: CreateFormBody): Promise<MetadataForm> {
  let fields: FormField[] = body.fields ? normalizeFields(body.fields) : [];
  if (body.form_template_id !== undefined) {
    const t = await ctx.db.selectFrom('metadata_forms').selectAll().where('id', '=', body.form_template_id).where('team_id', '=', portal.team_id).where('portal_id', 'is', null).executeTakeFirst();
    if (!t) throw badRequest('form_template_id names no form template of this Team', 'unknown_form_template');
    if (!body.fields) fields = fieldsOf(t);
  }
  const now = nowIso();
  const row: MetadataFormsTable = {
    id: newId('frm'), team_id: portal.team_id, portal_id: portal.id, name: body.name, delivery_formats: dedupe(body.delivery_formats),
    form_template_id: body.form_template_id ?? null, disabled: body.disabled ? 1 : 0, fields: JSON.stringify(fields), created_at: now, updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await lockRow(trx, 'portals', portal.id);
    if (await portalForm(trx, portal.id)) throw conflict('this Portal has a form already; change it with PUT /v1/metadata/forms/{form_id}', 'form_exists');
    await trx.insertInto('metadata_forms').values(row).execute();
  });
  return formDto(row);
}

export async function createTemplate(ctx: HostedContext, teamId: string, body: UpdateFormBody): Promise<FormTemplate> {
  const now = nowIso();
  const row: MetadataFormsTable = {
    id: newId('tpl'), team_id: teamId, portal_id: null, name: body.name, delivery_formats: dedupe(body.delivery_formats), form_template_id: null,
    disabled: body.disabled ? 1 : 0, fields: JSON.stringify(body.fields ? normalizeFields(body.fields) : []), created_at: now, updated_at: now,
  };
  await ctx.db.insertInto('metadata_forms').values(row).execute();
  return templateDto(row);
}

/** PUT of the complete form or template; omitted disabled and fields keep their value. */
export async function updateForm(ctx: HostedContext, row: MetadataFormsTable, body: UpdateFormBody): Promise<MetadataFormsTable> {
  const set = {
    name: body.name,
    delivery_formats: dedupe(body.delivery_formats),
    disabled: body.disabled === undefined ? row.disabled : body.disabled ? 1 : 0,
    fields: body.fields === undefined ? row.fields : JSON.stringify(normalizeFields(body.fields)),
    updated_at: nowIso(),
  };
  const r = await ctx.db.updateTable('metadata_forms').set(set).where('id', '=', row.id).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw notFound(row.portal_id ? 'form' : 'form template');
  return { ...row, ...set };
}

/**
 * Deletes a form or template. A form's unused responses go with it; responses a
 * Package took stay, since they are delivered at its finalize.
 */
export async function deleteForm(ctx: HostedContext, row: MetadataFormsTable): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('form_responses').where('form_id', '=', row.id).where('package_id', 'is', null).execute();
    await trx.deleteFrom('metadata_forms').where('id', '=', row.id).execute();
  });
}

export async function listTemplates(ctx: HostedContext, teamId: string): Promise<FormTemplate[]> {
  const rows = await ctx.db.selectFrom('metadata_forms').selectAll().where('team_id', '=', teamId).where('portal_id', 'is', null).orderBy('created_at').orderBy('id').execute();
  return rows.map(templateDto);
}

/** What the Portal shows its uploaders: the enabled form's fields but hidden ones, in position order. */
export interface UploaderForm {
  custom_metadata: FormField[];
  /** Whether a Package needs a form response (form_data_id): the Portal has an enabled form. */
  custom_metadata_required: boolean;
}

export const uploaderView = (form: MetadataFormsTable | undefined): UploaderForm =>
  form && form.disabled === 0
    ? { custom_metadata: fieldsOf(form).filter((f) => f.visibility !== 'hidden'), custom_metadata_required: true }
    : { custom_metadata: [], custom_metadata_required: false };

/** uploaderView of several Portals at once (lists). */
export async function uploaderViews(db: Db, portalIds: string[]): Promise<Map<string, UploaderForm>> {
  const rows = portalIds.length ? await db.selectFrom('metadata_forms').selectAll().where('portal_id', 'in', portalIds).execute() : [];
  const byPortal = new Map(rows.map((r) => [r.portal_id!, r]));
  return new Map(portalIds.map((id) => [id, uploaderView(byPortal.get(id))]));
}
