// /downloads: thin routes over the downloads service. No session needed.
import type { AgentRouteModule } from '../app.js';
import type { DownloadState, DownloadSummary } from '../../../api/agent/downloads.js';
import {
  CreateDownloadBody,
  CreatedDownload,
  DeleteDownloadQuery,
  DeleteDownloadsQuery,
  DownloadList,
  DownloadParams,
  DownloadRecord,
} from '../../../api/agent/downloads.js';
import { DownloadFilesPage, FilesQuery, RecordQuery } from '../../../api/agent/transfers.js';
import { records, recordsOrSummaries, removedRecords, summaries } from './recordAnswers.js';

const routes: AgentRouteModule = (app, services) => {
  const downloads = services.downloads;
  const { many: answer, one } = recordsOrSummaries(downloads.get, downloads.summary);

  app.post('/downloads', { schema: { body: CreateDownloadBody, response: { 201: CreatedDownload } } }, async (req, reply) => {
    const created = await downloads.create(req.body);
    return reply.code(201).send(created);
  });

  // `files=false`: the summaries (no `items`); else the whole records, made as they are sent.
  app.get('/downloads', { schema: { querystring: RecordQuery, response: { 200: DownloadList } } }, async (req, reply) =>
    req.query.files === false ? summaries(reply, downloads.summaries()) : records(reply, downloads.list(), true),
  );

  app.get('/downloads/:download_id', { schema: { params: DownloadParams, querystring: RecordQuery, response: { 200: DownloadRecord } } }, async (req, reply) =>
    one(reply, req.query, req.params.download_id),
  );

  app.get('/downloads/:download_id/files', { schema: { params: DownloadParams, querystring: FilesQuery, response: { 200: DownloadFilesPage } } }, async (req) =>
    downloads.files(req.params.download_id, req.query.after, req.query.limit),
  );

  const ids = (ds: DownloadSummary[]) => ds.map((d) => d.download_id);

  // The routes without an id are declared before `/:download_id/...`, so "pause" is never taken for an id.
  app.post('/downloads/pause', { schema: { querystring: RecordQuery, response: { 200: DownloadList } } }, async (req, reply) =>
    answer(reply, req.query, ids(await downloads.pauseMany())),
  );
  app.post('/downloads/resume', { schema: { querystring: RecordQuery, response: { 200: DownloadList } } }, async (req, reply) =>
    answer(reply, req.query, ids(downloads.resumeMany())),
  );

  app.post('/downloads/:download_id/pause', { schema: { params: DownloadParams, querystring: RecordQuery, response: { 200: DownloadRecord } } }, async (req, reply) =>
    one(reply, req.query, (await downloads.pause(req.params.download_id)).download_id),
  );
  app.post('/downloads/:download_id/resume', { schema: { params: DownloadParams, querystring: RecordQuery, response: { 200: DownloadRecord } } }, async (req, reply) =>
    one(reply, req.query, downloads.resume(req.params.download_id).download_id),
  );

  // Ferry: stops the download at once and keeps it in the history as canceled.
  app.post('/downloads/:download_id/cancel', { schema: { params: DownloadParams, querystring: RecordQuery, response: { 200: DownloadRecord } } }, async (req, reply) =>
    one(reply, req.query, (await downloads.cancel(req.params.download_id)).download_id),
  );

  // A removal answers what it removed: the summaries, or the whole records written aside before the rows went.
  app.delete(
    '/downloads/:download_id',
    { schema: { params: DownloadParams, querystring: DeleteDownloadQuery, response: { 200: DownloadRecord } } },
    async (req, reply) => {
      const removeFiles = req.query.remove_files ?? false;
      if (req.query.files === false) return summaries(reply, await downloads.remove(req.params.download_id, removeFiles));
      return removedRecords(reply, false, (keep) => downloads.remove(req.params.download_id, removeFiles, keep));
    },
  );

  app.delete('/downloads', { schema: { querystring: DeleteDownloadsQuery, response: { 200: DownloadList } } }, async (req, reply) => {
    const states = req.query.states ? ([...new Set(req.query.states.split(','))] as DownloadState[]) : undefined;
    const removeFiles = req.query.remove_files ?? false;
    if (req.query.files === false) return summaries(reply, await downloads.removeMany(states, removeFiles));
    return removedRecords(reply, true, (keep) => downloads.removeMany(states, removeFiles, keep));
  });
};
export default routes;
