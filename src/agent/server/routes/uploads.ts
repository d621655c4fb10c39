// The Uploads group: thin routes over services.uploads.
import type { AgentRouteModule } from '../app.js';
import {
  CreateUploadBody,
  DeleteUploadsQuery,
  FinalizeAnswer,
  PortalUploadBody,
  UploadLinkAnswer,
  UploadLinkBody,
  UploadLinkEntry,
  UploadLinkList,
  UploadLinkParams,
  UploadList,
  UploadParams,
  UploadRecord,
  type UploadState,
  type UploadSummary,
} from '../../../api/agent/uploads.js';
import { FilesQuery, RecordQuery, UploadFilesPage } from '../../../api/agent/transfers.js';
import { records, recordsOrSummaries, removedRecords, summaries } from './recordAnswers.js';

const routes: AgentRouteModule = (app, services) => {
  const uploads = services.uploads;

  const { many: answer, one } = recordsOrSummaries(uploads.get, uploads.summary);

  app.post('/uploads', { schema: { body: CreateUploadBody, querystring: RecordQuery, response: { 201: UploadRecord } } }, async (req, reply) => {
    const made = await uploads.create(req.body);
    return one(reply.code(201), req.query, made.upload_id);
  });

  // A Portal upload needs no session (unless the Portal is for signed-in members).
  app.post('/portals/uploads', { schema: { body: PortalUploadBody, querystring: RecordQuery, response: { 201: UploadRecord } } }, async (req, reply) => {
    const made = await uploads.createPortal(req.body);
    return one(reply.code(201), req.query, made.upload_id);
  });

  // `files=false`: the summaries (no `items`); else the whole records, made as they are sent.
  app.get('/uploads', { schema: { querystring: RecordQuery, response: { 200: UploadList } } }, async (req, reply) =>
    req.query.files === false ? summaries(reply, uploads.summaries()) : records(reply, uploads.list(), true),
  );

  app.get('/uploads/:upload_id', { schema: { params: UploadParams, querystring: RecordQuery, response: { 200: UploadRecord } } }, async (req, reply) =>
    one(reply, req.query, req.params.upload_id),
  );

  app.get('/uploads/:upload_id/files', { schema: { params: UploadParams, querystring: FilesQuery, response: { 200: UploadFilesPage } } }, async (req) =>
    uploads.files(req.params.upload_id, req.query.after, req.query.limit),
  );

  const ids = (us: UploadSummary[]) => us.map((u) => u.upload_id);
  app.post('/uploads/pause', { schema: { querystring: RecordQuery, response: { 200: UploadList } } }, async (req, reply) =>
    answer(reply, req.query, ids(await uploads.pauseMany())),
  );
  app.post('/uploads/resume', { schema: { querystring: RecordQuery, response: { 200: UploadList } } }, async (req, reply) =>
    answer(reply, req.query, ids(uploads.resumeMany())),
  );

  app.post('/uploads/:upload_id/pause', { schema: { params: UploadParams, querystring: RecordQuery, response: { 200: UploadRecord } } }, async (req, reply) =>
    one(reply, req.query, (await uploads.pause(req.params.upload_id)).upload_id),
  );
  app.post('/uploads/:upload_id/resume', { schema: { params: UploadParams, querystring: RecordQuery, response: { 200: UploadRecord } } }, async (req, reply) =>
    one(reply, req.query, uploads.resume(req.params.upload_id).upload_id),
  );

  // Ferry: stops the upload at once and keeps it in the history as canceled.
  app.post('/uploads/:upload_id/cancel', { schema: { params: UploadParams, querystring: RecordQuery, response: { 200: UploadRecord } } }, async (req, reply) =>
    one(reply, req.query, (await uploads.cancel(req.params.upload_id)).upload_id),
  );

  // A removal answers what it removed: the summaries, or the whole records written aside before the rows went.
  app.delete('/uploads', { schema: { querystring: DeleteUploadsQuery, response: { 200: UploadList } } }, async (req, reply) => {
    const states = req.query.states ? (req.query.states.split(',') as UploadState[]) : undefined;
    if (req.query.files === false) return summaries(reply, await uploads.removeMany(states));
    return removedRecords(reply, true, (keep) => uploads.removeMany(states, keep));
  });
  app.delete('/uploads/:upload_id', { schema: { params: UploadParams, querystring: RecordQuery, response: { 200: UploadRecord } } }, async (req, reply) => {
    if (req.query.files === false) return summaries(reply, await uploads.remove(req.params.upload_id));
    return removedRecords(reply, false, (keep) => uploads.remove(req.params.upload_id, keep));
  });

  app.post('/uploads/:upload_id/finalize', { schema: { params: UploadParams, response: { 200: FinalizeAnswer } } }, async (req) =>
    uploads.finalize(req.params.upload_id),
  );

  app.post(
    '/uploads/:upload_id/link',
    {
      schema: { params: UploadParams, body: UploadLinkBody, response: { 201: UploadLinkAnswer } },
      // Every field is optional, so no body asks for the defaults (a JSON null is not "no body": 400).
      preValidation: async (req) => {
        if (req.body === undefined) req.body = {};
      },
    },
    async (req, reply) => reply.code(201).send(await uploads.link(req.params.upload_id, req.body)),
  );

  // Link management: the Package's Links with their counts, and revoking one of them.
  app.get('/uploads/:upload_id/links', { schema: { params: UploadParams, response: { 200: UploadLinkList } } }, async (req) =>
    uploads.links(req.params.upload_id),
  );
  app.delete('/uploads/:upload_id/links/:link_id', { schema: { params: UploadLinkParams, response: { 200: UploadLinkEntry } } }, async (req) =>
    uploads.revokeLink(req.params.upload_id, req.params.link_id),
  );
};
export default routes;
