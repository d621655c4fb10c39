// POST /v1/portals/{portal_id}/form/responses: an uploader answers the Portal's
// enabled form (same admission as a Portal Package: access code or member).
import type { HostedContext } from '../context.js';
import type { FormResponsesTable } from '../db/schema.js';
import type { FormResponse, FormResponseBody } from '../../api/hosted/forms.js';
import { conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import { fieldsOf, formatsOf, portalForm } from './forms.js';
import { answer, responseDto, type AnsweredForm } from './formResponses.js';
import { admitUploader, type Uploader } from './portalPackages.js';

/** The Portal's admission rules, then its enabled form; the answer shows hidden fields to members only. */
export async function createResponse(ctx: HostedContext, portalId: string, uploader: Uploader, body: FormResponseBody): Promise<FormResponse> {
  const { portal, member } = await admitUploader(ctx, portalId, uploader);
  const form = await portalForm(ctx.db, portal.id);
  if (!form) throw notFound('form');
  if (form.disabled === 1) throw conflict("this Portal's form is disabled", 'form_disabled');
  const fields = fieldsOf(form);
  const row: FormResponsesTable = {
    id: newId('fdr'),
    team_id: portal.team_id,
    portal_id: portal.id,
    form_id: form.id,
    package_id: null,
    form: JSON.stringify({ name: form.name, delivery_formats: formatsOf(form), fields } satisfies AnsweredForm),
    data: JSON.stringify(answer(fields, body)),
    created_at: nowIso(),
  };
  await ctx.db.insertInto('form_responses').values(row).execute();
  return responseDto(row, member);
}

