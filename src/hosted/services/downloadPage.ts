// The HTML of the web download page behind a Link: self-contained (inline CSS,
// no script, no external asset; the frame is pageLayout.ts), every value escaped.
import type { LinkInfo } from '../../api/hosted/links.js';
import type { PageDownloads } from './downloads.js';
import { DEFAULT_PRIMARY_COLOR } from './links.js';
import { renderPage } from './pageLayout.js';
import { bytes } from '../../format/sizes.js';
import { escapeHtml as e } from './notify.js';

/** Headers the page is served with: nothing may load, frame it, or leak its secret URL. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function layout(title: string, color: string, body: string): string {
  return renderPage({ title, accent: color, body });
}

export function renderErrorPage(message: string): string {
  return layout('Download unavailable', DEFAULT_PRIMARY_COLOR, `<h1>Download unavailable</h1>\n<p class="muted">${e(message)}</p>`);
}

/** The password form; it posts back to the page's own address (link id and secret). */
export function renderPasswordPage(action: string, error?: string): string {
  return layout(
    'Password required',
    DEFAULT_PRIMARY_COLOR,
    `<h1>Password required</h1>
<p class="muted">The sender protected this download with a password.</p>
${error ? `<p class="err">${e(error)}</p>` : ''}
<form method="post" action="${e(action)}">
<input type="password" name="password" autocomplete="current-password" autofocus required aria-label="Password" style="width:260px">
<button type="submit">Open</button>
</form>`,
  );
}

/**
 * The file list, a page of it at a time (LINK_PAGE_FILES, with links to the next
 * page and back to the first: a Package of 100,000 files is never 100,000 rows),
 * each with a checkbox of a GET form to the ZIP route (no script: the form sends
 * the chosen ids, `file=...`, with the page's ZIP token), and "Open in Ferry" (the
 * app's ferry:// scheme with this Link) for recipients who have the app.
 */
export function renderDownloadPage(info: LinkInfo, d: PageDownloads, preferWindows: boolean, linkUrl: string): string {
  const [main, other] = preferWindows ? (['zip_windows', 'zip_mac'] as const) : (['zip_mac', 'zip_windows'] as const);
  const zip = new URL(d.zip[main]);
  const rows = d.files
    .map(
      (f) =>
        `<tr><td class="pick"><input type="checkbox" name="file" value="${e(f.id)}" form="pick" aria-label="Choose ${e(f.rel)}"></td>` +
        `<td><a href="${e(f.url)}" download>${e(f.rel)}</a></td><td class="size">${e(bytes(f.size))}</td></tr>`,
    )
    .join('\n');
  const total = info.total_files ?? d.files.length;
  const count = `${total.toLocaleString('en-US')} ${total === 1 ? 'file' : 'files'}, ${bytes(info.package_size)}`;
  return layout(
    info.name,
    info.branding.primary_color,
    `<h1>${e(info.name)}</h1>
<p class="muted">From ${e(info.sender_email)} &middot; ${e(count)}${info.expiry ? ` &middot; available until ${e(info.expiry.slice(0, 16).replace('T', ' '))} UTC` : ''}</p>
<div class="actions"><a class="btn" href="${e(d.zip[main])}">Download all (ZIP)</a>
<a class="btn ghost" href="${e(`ferry://receive?url=${encodeURIComponent(linkUrl)}`)}">Open in Ferry</a>
<span class="muted">or as a ZIP <a href="${e(d.zip[other])}">for ${other === 'zip_windows' ? 'Windows' : 'macOS'}</a></span></div>
<form id="pick" method="get" action="${e(zip.origin + zip.pathname)}"><input type="hidden" name="token" value="${e(zip.searchParams.get('token') ?? '')}"></form>
<table>
<caption class="muted" style="text-align:left">Choose files to get them as one ZIP, or click a name to download that file.</caption>
${rows}
</table>
${withheldNote(d)}
${pager(d, total, new URL(linkUrl).search)}
<p><button type="submit" form="pick" class="ghost">Download chosen files (ZIP)</button></p>
<p class="muted">These download addresses work until ${e(d.until.toISOString().slice(0, 16).replace('T', ' '))} UTC; open this page again for fresh ones.
&ldquo;Open in Ferry&rdquo; needs the Ferry app on this computer.</p>`,
  );
}

/** Where the page stands in a long list, and the links to the next files and back to the first. */
function pager(d: PageDownloads, total: number, first: string): string {
  if (!d.next && !d.later) return '';
  const shown = d.files.length + d.withheld.length;
  const links = [
    d.later ? `<a href="${e(first)}">First files</a>` : '',
    d.next ? `<a class="btn ghost" href="${e(`${first}&after=${d.next}`)}">Next files</a>` : '',
  ].filter(Boolean);
  return `<nav class="actions" aria-label="More files of this Package"><span class="muted">${e(`This page shows ${shown.toLocaleString('en-US')} of the ${total.toLocaleString('en-US')} files; choosing files for a ZIP works within a page.`)}</span>
${links.join('\n')}</nav>`;
}

/** Says which files the page (and its ZIPs) leave out because of the malware scan. */
function withheldNote(d: PageDownloads): string {
  if (!d.withheld?.length) return '';
  const why = { virus_detected: 'flagged with malware', scan_failed: 'could not be scanned for malware', scan_pending: 'still being scanned; open this page again shortly' };
  const items = d.withheld.map((w) => `<li>${e(w.rel)}: ${e(why[w.why])}</li>`).join('');
  return `<p class="err">Not offered for download:</p><ul class="withheld">${items}</ul>`;
}
