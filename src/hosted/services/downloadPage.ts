// The HTML of the web download page behind a Link: self-contained (inline CSS,
// no script, no external asset), every value escaped.
import type { LinkInfo } from '../../api/hosted/links.js';
import type { PageDownloads } from './downloads.js';
import { DEFAULT_PRIMARY_COLOR } from './links.js';
import { escapeHtml as e, humanSize } from './notify.js';

/** Headers the page is served with: nothing may load, frame it, or leak its secret URL. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

const safeColor = (c: string) => (/^#[0-9a-fA-F]{3,8}$/.test(c) ? c : DEFAULT_PRIMARY_COLOR);

function layout(title: string, color: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${e(title)}</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
main{max-width:760px;margin:40px auto;background:#fff;border-radius:10px;padding:28px 32px;box-shadow:0 1px 4px #0002}
h1{font-size:22px;margin:0 0 6px}.muted{color:#667085}.err{color:#b42318}
a.btn,button{display:inline-block;background:${safeColor(color)};color:#fff;border:0;border-radius:6px;padding:10px 18px;font-size:15px;text-decoration:none;cursor:pointer}
table{width:100%;border-collapse:collapse;margin:18px 0}td{padding:7px 4px;border-top:1px solid #eaecf0;word-break:break-all}
td.size{text-align:right;white-space:nowrap;color:#667085}input{font-size:15px;padding:9px;border:1px solid #d0d5dd;border-radius:6px;width:260px}
</style></head><body><main>
${body}
</main></body></html>`;
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
<input type="password" name="password" autocomplete="current-password" autofocus required aria-label="Password">
<button type="submit">Open</button>
</form>`,
  );
}

export function renderDownloadPage(info: LinkInfo, d: PageDownloads, preferWindows: boolean): string {
  const [main, other] = preferWindows ? (['zip_windows', 'zip_mac'] as const) : (['zip_mac', 'zip_windows'] as const);
  const rows = d.files
    .map((f) => `<tr><td><a href="${e(f.url)}" download>${e(f.rel)}</a></td><td class="size">${e(humanSize(f.size))}</td></tr>`)
    .join('\n');
  const count = `${d.files.length} ${d.files.length === 1 ? 'file' : 'files'}, ${humanSize(info.package_size)}`;
  return layout(
    info.name,
    info.branding.primary_color,
    `<h1>${e(info.name)}</h1>
<p class="muted">From ${e(info.sender_email)} &middot; ${e(count)}${info.expiry ? ` &middot; available until ${e(info.expiry.slice(0, 16).replace('T', ' '))} UTC` : ''}</p>
<p><a class="btn" href="${e(d.zip[main])}">Download all (ZIP)</a>
<span class="muted">&nbsp;or as a ZIP <a href="${e(d.zip[other])}">for ${other === 'zip_windows' ? 'Windows' : 'macOS'}</a></span></p>
<table>
${rows}
</table>
${withheldNote(d)}
<p class="muted">These download addresses work until ${e(d.until.toISOString().slice(0, 16).replace('T', ' '))} UTC; open this page again for fresh ones.</p>`,
  );
}

/** Says which files the page (and its ZIPs) leave out because of the malware scan. */
function withheldNote(d: PageDownloads): string {
  if (!d.withheld?.length) return '';
  const why = { virus_detected: 'flagged with malware', scan_failed: 'could not be scanned for malware', scan_pending: 'still being scanned; open this page again shortly' };
  const items = d.withheld.map((w) => `<li>${e(w.rel)}: ${e(why[w.why])}</li>`).join('');
  return `<p class="err">Not offered for download:</p><ul class="withheld">${items}</ul>`;
}
