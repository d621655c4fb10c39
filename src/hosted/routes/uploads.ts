// The upload flow of a Package (package token with full access, while the
// Package is new): register files, hand out part blueprints, finalize files
// (one at a time, or several at once), then finalize the Package.
import type { RouteModule } from '../app.js';
import { authorizePackage } from '../auth/credentials.js';
import {
  FileParams,
  FinalizeFileBody,
  FinalizeFilesAnswer,
  FinalizeFilesBody,
  PartBlueprintsAnswer,
  PartBlueprintsQuery,
  RegisterFileAnswer,
  RegisterFileBody,
  RegisterFileQuery,
  RegisterFilesAnswer,
  RegisterFilesBody,
  UploadIdBody,
} from '../../api/hosted/files.js';
import { PackageParams } from '../../api/hosted/packages.js';
import { partBlueprints, registerFile } from '../services/files.js';
import { finalizeFile } from '../services/fileFinalize.js';
import { finalizeFiles, registerFiles } from '../services/fileBatches.js';
import { finalizePackage } from '../services/finalize.js';

const routes: RouteModule = (app, ctx) => {
  app.post(
    '/v1/packages/:package_id/files',
    { schema: { params: PackageParams, querystring: RegisterFileQuery, body: RegisterFileBody, response: { 201: RegisterFileAnswer } } },
    async (req, reply) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
      reply.code(201);
      return registerFile(ctx, pkg, req.body, req.query);
    },
  );

  app.post(
    '/v1/packages/:package_id/register_files',
    { schema: { params: PackageParams, body: RegisterFilesBody, response: { 200: RegisterFilesAnswer } } },
    async (req) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
      return { results: await registerFiles(ctx, pkg, req.body.files) };
    },
  );

  app.post(
    '/v1/packages/:package_id/files/:file_id',
    { schema: { params: FileParams, querystring: PartBlueprintsQuery, body: UploadIdBody, response: { 200: PartBlueprintsAnswer } } },
    async (req) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
      return partBlueprints(ctx, pkg, req.params.file_id, req.query.start, req.query.count, req.body.upload_id);
    },
  );

  app.post(
    '/v1/packages/:package_id/files/:file_id/finalize',
    { schema: { params: FileParams, body: FinalizeFileBody } },
    async (req, reply) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
      await finalizeFile(ctx, pkg, req.params.file_id, req.body);
      reply.code(204).send();
    },
  );

  app.post(
    '/v1/packages/:package_id/finalize_files',
    { schema: { params: PackageParams, body: FinalizeFilesBody, response: { 200: FinalizeFilesAnswer } } },
    async (req) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
      return { results: await finalizeFiles(ctx, pkg, req.body.files) };
    },
  );

  app.post('/v1/packages/:package_id/finalize', { schema: { params: PackageParams } }, async (req, reply) => {
    const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'upload');
    await finalizePackage(ctx, pkg);
    reply.code(204).send();
  });
};
export default routes;
