// The download flow: a Package's file list (whole, or a page at a time: Ferry's
// addition), short-lived download URLs (one or many at once), and the streamed ZIP of the whole Package
// those URLs point at for zip_windows/zip_mac.
import type { RouteModule } from '../app.js';
import { authorizePackage } from '../auth/credentials.js';
import { Type } from 'typebox';
import { DownloadAnswer, DownloadQuery, type FileObject, DownloadUrlsAnswer, DownloadUrlsBody, FileList, FilePage, FileParams, FilesPageQuery, ZipParams, ZipQuery } from '../../api/hosted/files.js';
import { PackageParams } from '../../api/hosted/packages.js';
import { downloadUrl, downloadUrls, packageFilesJson, zipScanCheck } from '../services/downloads.js';
import { listFilesPage } from '../services/fileList.js';
import { checkZipToken, chosenFiles, requireDownloadable, withheldCount, zipFileName, zipPages } from '../services/zip.js';
import { streamZip } from '../services/zipStream.js';

/** `attachment` with an ASCII fallback name and the exact UTF-8 one (RFC 6266). */
const attachment = (name: string) =>
  `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\%]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;

const routes: RouteModule = (app, ctx) => {
  // The spec's whole array; with `limit` or `after`, one page of it (services/fileList.ts).
  app.get(
    '/v1/packages/:package_id/files',
    { schema: { params: PackageParams, querystring: FilesPageQuery, response: { 200: Type.Union([FilePage, FileList]) } } },
    async (req, reply) => {
      const { pkg } = await authorizePackage(ctx, req, req.params.package_id, 'read');
      if (req.query.limit !== undefined || req.query.after !== undefined) return listFilesPage(ctx.db, pkg, req.query);
      // The spec's whole array goes out as it is read: Fastify sends a stream as it is (the
      // schema above still says its shape), and its entries are FileObjects already.
      return reply.type('application/json; charset=utf-8').send(packageFilesJson(ctx, pkg) as unknown as FileObject[]);
    },
  );

  app.get(
    '/v1/packages/:package_id/files/:file_id/download',
    { schema: { params: FileParams, querystring: DownloadQuery, response: { 200: DownloadAnswer } } },
    async (req) => {
      const grant = await authorizePackage(ctx, req, req.params.package_id, 'read');
      return downloadUrl(ctx, grant, req.params.file_id, req.query.expiry);
    },
  );

  // Ferry's addition: many files' URLs in one request (and one count against the Package's rate limit).
  app.post(
    '/v1/packages/:package_id/download_urls',
    { schema: { params: PackageParams, body: DownloadUrlsBody, response: { 200: DownloadUrlsAnswer } } },
    async (req) => {
      const grant = await authorizePackage(ctx, req, req.params.package_id, 'read');
      return { results: await downloadUrls(ctx, grant, req.body.files.map((f) => f.file_id), req.body.expiry) };
    },
  );

  // The URL handed out for zip_windows/zip_mac carries `token`; API clients may
  // send their X-Package-Token instead.
  app.get(
    '/v1/packages/:package_id/zip/:variant',
    { exposeHeadRoute: false, schema: { params: ZipParams, querystring: ZipQuery } },
    async (req, reply) => {
      const { package_id: packageId, variant } = req.params;
      const pkg = req.query.token
        ? await checkZipToken(ctx, req.query.token, packageId, variant)
        : (await authorizePackage(ctx, req, packageId, 'read')).pkg;
      requireDownloadable(pkg);
      await zipScanCheck(ctx, pkg.id);
      const chosen = req.query.file ? await chosenFiles(ctx, pkg.id, req.query.file) : undefined;
      // Files flagged by the malware scan (or not scannable) are left out; the header says how many.
      const withheld = await withheldCount(ctx, pkg.id, chosen);
      if (withheld > 0) reply.header('x-ferry-withheld-files', String(withheld));
      const zip = await streamZip(zipPages(ctx, pkg.id, variant, chosen), (key) => ctx.storage.read(key));
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) zip.abort();
      });
      zip.stream.on('error', (err) => req.log.warn({ err, packageId }, 'zip stream failed'));
      return reply
        .header('content-length', String(zip.size))
        .header('content-type', 'application/zip')
        .header('content-disposition', attachment(zipFileName(pkg.name, variant)))
        .header('cache-control', 'no-store')
        .send(zip.stream);
    },
  );
};
export default routes;
