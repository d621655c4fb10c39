// /downloads: thin routes over the downloads service. No session needed.
import type { AgentRouteModule } from '../app.js';
import type { DownloadState } from '../../../api/agent/downloads.js';
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
import { summaries } from './summaries.js';

const routes: AgentRouteModule = (app, services) => {
  const downloads = services.downloads;

  app.post('/downloads', { schema: { body: CreateDownloadBody, response: { 201: CreatedDownload } } }, async (req, reply) => {
    const created = await downloads.create(req.body);
    return reply.code(201).send(created);
  });

  // `files=false`: the summaries (no `items`), which the record's response schema would not let through.
  app.get('/downloads', { schema: { querystring: RecordQuery, response: { 200: DownloadList } } }, async (req, reply) =>
    req.query.files === false ? summaries(reply, downloads.summaries()) : downloads.list(),
  );

  app.get('/downloads/:download_id', { schema: { params: DownloadParams, querystring: RecordQuery, response: { 200: DownloadRecord } } }, async (req, reply) =>
    req.query.files === false ? summaries(reply, downloads.summary(req.params.download_id)) : downloads.get(req.params.download_id),
  );

  app.get('/downloads/:download_id/files', { schema: { params: DownloadParams, querystring: FilesQuery, response: { 200: DownloadFilesPage } } }, async (req) =>
    downloads.files(req.params.download_id, req.query.after, req.query.limit),
  );

  // The routes without an id are declared before `/:download_id/...`, so "pause" is never taken for an id.
  app.post('/downloads/pause', { schema: { response: { 200: DownloadList } } }, async () => (await downloads.pauseMany()).map((d) => downloads.get(d.download_id)));
  app.post('/downloads/resume', { schema: { response: { 200: DownloadList } } }, async () => downloads.resumeMany().map((d) => downloads.get(d.download_id)));

  app.post('/downloads/:download_id/pause', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.get((await downloads.pause(req.params.download_id)).download_id),
  );
  app.post('/downloads/:download_id/resume', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.get((await downloads.resume(req.params.download_id)).download_id),
  );

  // Ferry: stops the download at once and keeps it in the history as canceled.
  app.post('/downloads/:download_id/cancel', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.get((await downloads.cancel(req.params.download_id)).download_id),
  );

  app.delete(
    '/downloads/:download_id',
    { schema: { params: DownloadParams, querystring: DeleteDownloadQuery, response: { 200: DownloadRecord } } },
    async (req) => downloads.remove(req.params.download_id, req.query.remove_files ?? false),
  );

  app.delete('/downloads', { schema: { querystring: DeleteDownloadsQuery, response: { 200: DownloadList } } }, async (req) => {
    const states = req.query.states ? ([...new Set(req.query.states.split(','))] as DownloadState[]) : undefined;
    return downloads.removeMany(states, req.query.remove_files ?? false);
  });
};
export default routes;
