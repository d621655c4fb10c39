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

const routes: AgentRouteModule = (app, services) => {
  const downloads = services.downloads;

  app.post('/downloads', { schema: { body: CreateDownloadBody, response: { 201: CreatedDownload } } }, async (req, reply) => {
    const created = await downloads.create(req.body);
    return reply.code(201).send(created);
  });

  app.get('/downloads', { schema: { response: { 200: DownloadList } } }, async () => downloads.list());

  app.get('/downloads/:download_id', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.get(req.params.download_id),
  );

  // The routes without an id are declared before `/:download_id/...`, so "pause" is never taken for an id.
  app.post('/downloads/pause', { schema: { response: { 200: DownloadList } } }, async () => downloads.pauseMany());
  app.post('/downloads/resume', { schema: { response: { 200: DownloadList } } }, async () => downloads.resumeMany());

  app.post('/downloads/:download_id/pause', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.pause(req.params.download_id),
  );
  app.post('/downloads/:download_id/resume', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.resume(req.params.download_id),
  );

  // Ferry: stops the download at once and keeps it in the history as canceled.
  app.post('/downloads/:download_id/cancel', { schema: { params: DownloadParams, response: { 200: DownloadRecord } } }, async (req) =>
    downloads.cancel(req.params.download_id),
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
