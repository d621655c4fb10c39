// Receive's preview ("Show files") of a Link's Package: its totals and the first
// page of its files, then further pages as the window scrolls, read from the
// service's paged file list, so that a Package of a million files previews with
// one page. The Link is opened (resolved, or its kept resolution reused) by
// downloadLink.ts, which calls these with the way to list through it.
import type { HostedHttp } from '../../client/http.js';
import { packageFilesPage } from '../../client/downloads.js';
import type { LinkInfo } from '../../api/hosted/links.js';
import type { FilePage } from '../../api/hosted/files.js';
import type { LinkPreview, PreviewFilesPage } from '../../api/agent/downloads.js';

/** Files a preview page holds: what the window draws at a time. */
export const PREVIEW_PAGE = 200;

/** Opens the Link of `url` and lists through it: the resolution, and what `list` answered. */
export type OpenLink = <T>(
  url: string,
  password: string | undefined,
  list: (http: HostedHttp, packageId: string, packageToken: string) => Promise<T>,
) => Promise<{ info: LinkInfo; files: T }>;

/** A page of the service's list as the preview lists files (folders are not rows; their files are). */
function previewPage(page: FilePage): PreviewFilesPage {
  const files = page.files.filter((f) => f.kind === 'file').map((f) => ({ file_id: f.id, path: f.path ? `${f.path}/${f.name}` : f.name, size: f.size ?? 0 }));
  return { files, next: page.next };
}

export function createLinkPreview(open: OpenLink) {
  const pageAfter = (after: string | undefined) => (http: HostedHttp, packageId: string, token: string) =>
    packageFilesPage(http, packageId, token, { limit: PREVIEW_PAGE, ...(after ? { after } : {}) });

  return {
    /** The Package's totals and its first page of files. */
    async first(url: string, password?: string): Promise<LinkPreview> {
      const { info, files } = await open(url, password, pageAfter(undefined));
      const page = previewPage(files);
      // A service without total_files answers its whole list as one page: its files are the count.
      const count = info.total_files ?? page.files.length;
      return {
        package_id: info.package_id,
        name: info.name,
        sender_email: info.sender_email,
        description: info.description ?? '',
        expiry: info.expiry,
        size: info.package_size,
        file_count: count,
        files: page.files,
        next: page.next,
      };
    },

    /** The page of files after `after`, through the preview's kept resolution. */
    async after(url: string, password: string | undefined, after: string): Promise<PreviewFilesPage> {
      const { files } = await open(url, password, pageAfter(after));
      return previewPage(files);
    },
  };
}
