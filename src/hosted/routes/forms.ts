// Custom metadata: a Portal's form and the Team's templates (Owners and Admins
// write, members read), form responses (access code or member), and a
// Package's response (GET /v1/packages/{id}/metadata).
import type { FastifyRequest } from 'fastify';
import type { RouteModule } from '../app.js';
import {
  CreateFormBody,
  FormParams,
  FormResponse,
  FormResponseBody,
  FormTemplate,
  FormTemplateList,
  MetadataForm,
  TemplateParams,
  UpdateFormBody,
} from '../../api/hosted/forms.js';
import { PortalParams, TeamParams } from '../../api/hosted/portals.js';
import { PackageParams } from '../../api/hosted/packages.js';
import { authenticateUser, authorizePackage, hasUserCredential, teamMember } from '../auth/credentials.js';
import { notFound } from '../errors.js';
import { memberPortal } from '../services/portals.js';
import { ADMINS, createForm, createTemplate, deleteForm, formDto, listTemplates, memberForm, portalForm, templateDto, updateForm } from '../services/forms.js';
import { clientAddress } from '../ratelimit/plugin.js';
import { createResponse } from '../services/formSubmit.js';
import { packageMetadata } from '../services/formResponses.js';

const accessCodeOf = (req: FastifyRequest) => {
  const v = req.headers['x-access-code'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/portals/:portal_id/form',
    { schema: { params: PortalParams, body: CreateFormBody, response: { 201: MetadataForm } } },
    async (req, reply) => {
      const portal = await memberPortal(ctx, await authenticateUser(ctx, req), req.params.portal_id, [...ADMINS]);
      const form = await createForm(ctx, portal, req.body);
      reply.code(201);
      return form;
    },
  );

  app.get('/v1/portals/:portal_id/form', { schema: { params: PortalParams, response: { 200: MetadataForm } } }, async (req) => {
    const portal = await memberPortal(ctx, await authenticateUser(ctx, req), req.params.portal_id);
    const form = await portalForm(ctx.db, portal.id);
    if (!form) throw notFound('form');
    return formDto(form);
  });

  app.get('/v1/metadata/forms/:form_id', { schema: { params: FormParams, response: { 200: MetadataForm } } }, async (req) =>
    formDto(await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_id, false)),
  );

  app.put(
    '/v1/metadata/forms/:form_id',
    { schema: { params: FormParams, body: UpdateFormBody, response: { 200: MetadataForm } } },
    async (req) => {
      const row = await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_id, false, ADMINS);
      return formDto(await updateForm(ctx, row, req.body));
    },
  );

  app.delete('/v1/metadata/forms/:form_id', { schema: { params: FormParams } }, async (req, reply) => {
    await deleteForm(ctx, await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_id, false, ADMINS));
    reply.code(204).send();
  });

  app.post(
    '/v1/teams/:team_id/forms/templates',
    { schema: { params: TeamParams, body: UpdateFormBody, response: { 201: FormTemplate } } },
    async (req, reply) => {
      await teamMember(ctx, req, req.params.team_id, [...ADMINS]);
      const t = await createTemplate(ctx, req.params.team_id, req.body);
      reply.code(201);
      return t;
    },
  );

  app.get('/v1/teams/:team_id/forms/templates', { schema: { params: TeamParams, response: { 200: FormTemplateList } } }, async (req) => {
    await teamMember(ctx, req, req.params.team_id);
    return listTemplates(ctx, req.params.team_id);
  });

  app.get('/v1/metadata/forms/templates/:form_template_id', { schema: { params: TemplateParams, response: { 200: FormTemplate } } }, async (req) =>
    templateDto(await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_template_id, true)),
  );

  app.put(
    '/v1/metadata/forms/templates/:form_template_id',
    { schema: { params: TemplateParams, body: UpdateFormBody, response: { 200: FormTemplate } } },
    async (req) => {
      const row = await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_template_id, true, ADMINS);
      return templateDto(await updateForm(ctx, row, req.body));
    },
  );

  app.delete('/v1/metadata/forms/templates/:form_template_id', { schema: { params: TemplateParams } }, async (req, reply) => {
    await deleteForm(ctx, await memberForm(ctx, await authenticateUser(ctx, req), req.params.form_template_id, true, ADMINS));
    reply.code(204).send();
  });

  // X-API-KEY / X-User-Token of a Team member, or X-Access-Code (needed only when the Portal has one).
  app.post(
    '/v1/portals/:portal_id/form/responses',
    { schema: { params: PortalParams, body: FormResponseBody, response: { 201: FormResponse } } },
    async (req, reply) => {
      const who = hasUserCredential(req) ? await authenticateUser(ctx, req) : undefined;
      const accessCode = accessCodeOf(req);
      const r = await createResponse(ctx, req.params.portal_id, { ...(who ? { who } : {}), ...(accessCode !== undefined ? { accessCode } : {}), address: clientAddress(req) }, req.body);
      reply.code(201);
      return r;
    },
  );

  app.get('/v1/packages/:package_id/metadata', { schema: { params: PackageParams, response: { 200: FormResponse } } }, async (req) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'full');
    return packageMetadata(ctx, pkg);
  });
};
export default routes;
