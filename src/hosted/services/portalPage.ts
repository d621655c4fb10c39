// The HTML of the Portal upload page at {public_url}/p/{subdomain} (and at
// {subdomain}.{portal_domain}/): the Portal's name, message and limits are in the
// markup; the form, the file list and the upload are the page script's
// (web/portal/), which reads the Portal from the JSON data block.
import type { PublicPortal } from '../../api/hosted/portals.js';
import { bytes } from '../../format/sizes.js';
import { escapeHtml as e } from './notify.js';
import { renderPage } from './pageLayout.js';

export const PORTAL_SCRIPT_PATH = '/assets/portal-upload.js';

/** Script only from this origin; the page's requests go to the API (same origin) and to the store. */
export function portalPageHeaders(storeOrigin: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self' ${storeOrigin}; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

/** The limits in force, in words. */
export function restrictionWords(r: PublicPortal['restrictions']): string[] {
  const out: string[] = [];
  if (r.file_types?.length) out.push(`Only ${r.file_types.join(', ')} files`);
  if (r.max_file_size !== undefined) out.push(`Up to ${bytes(r.max_file_size)} per file`);
  if (r.max_file_count !== undefined) out.push(`At most ${r.max_file_count} ${r.max_file_count === 1 ? 'file' : 'files'}`);
  if (r.max_package_size !== undefined) out.push(`Up to ${bytes(r.max_package_size)} in all`);
  return out;
}

// The drop zone, fields, file rows and bars as the app draws them (renderer/styles.css), on the shared tokens.
// A field's heading (the terms' title) sits in the field's own rhythm, as a label does: no margins of an h2 of the page.
const CSS = `
.drop{border:2px dashed var(--line);border-radius:var(--radius-card);padding:40px var(--space-3);text-align:center;margin:var(--space-2) 0}
.drop.over{border-color:var(--accent);background:color-mix(in srgb,var(--accent) 8%,transparent)}
.drop p{margin:0 0 var(--space-2)}
.field{display:flex;flex-direction:column;gap:var(--space-half);margin:var(--space-2) 0}.field label,.field legend{font-weight:600}
.field>h2{margin:0}
.field input:not([type=checkbox]):not([type=radio]),.field textarea,.field select{width:100%}
.field .hint{font-size:var(--size-body);color:var(--muted)}.field .err{font-size:var(--size-body)}
.choice{display:flex;gap:var(--space-1);align-items:center;font-weight:400!important}
fieldset{border:0;padding:0;margin:var(--space-2) 0}
ul.files{list-style:none;padding:0;margin:var(--space-2) 0;border:1px solid var(--line);border-radius:var(--radius-row);background:var(--panel)}
ul.files li{padding:var(--space-1) var(--space-2);border-bottom:1px solid var(--line)}ul.files li:last-child{border-bottom:0}
.row{display:flex;gap:var(--space-1);align-items:center}.row .name{flex:1;word-break:break-all}
.row .size,.stats{color:var(--muted);font-size:var(--size-body);font-variant-numeric:tabular-nums;white-space:nowrap}
.row .size{min-width:72px;text-align:right}
.bar{height:4px;background:var(--line);border-radius:2px;margin-top:var(--space-half);overflow:hidden}
.bar>span{display:block;height:100%;width:0;background:var(--accent);transition:width var(--motion) linear}
li.done .bar>span{background:var(--ok)}li.failed .bar>span{background:var(--bad)}
button.remove{min-height:0;padding:0 var(--space-1);background:transparent;color:var(--muted);border:0;font-size:18px;line-height:1}
.banner{padding:var(--space-1) var(--space-2);border-radius:var(--radius-control);background:var(--side);border:1px solid var(--line);margin:var(--space-2) 0}
.terms-text{white-space:pre-wrap;max-height:200px;overflow:auto;border:1px solid var(--line);border-radius:var(--radius-control);padding:var(--space-1) var(--space-2);font-size:var(--size-body)}
.total .bar{height:8px;border-radius:4px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;

/** The upload page of an open Portal. */
export function renderPortalPage(p: PublicPortal, extra: Record<string, unknown> = {}): string {
  const limits = restrictionWords(p.restrictions);
  // The data block may not end the script element early: "<" is escaped in the JSON.
  const data = JSON.stringify({ ...p, ...extra }).replace(/</g, '\\u003c');
  return renderPage({
    title: `Send files to ${p.name}`,
    css: CSS,
    body: `<h1>Send files to ${e(p.name)}</h1>
${p.message ? `<p class="muted" style="white-space:pre-wrap">${e(p.message)}</p>` : ''}
${limits.length ? `<p class="muted" id="limits">${limits.map(e).join(' &middot; ')}</p>` : ''}
<noscript><p class="err">This page needs JavaScript to send files. Turn it on, or use the Ferry app.</p></noscript>
<div id="app" aria-live="polite"></div>`,
    tail: `\n<script type="application/json" id="portal-data">${data}</script>\n<script type="module" src="${PORTAL_SCRIPT_PATH}"></script>\n`,
  });
}

/** A Portal that cannot take uploads (unknown, closed, expired): the reason, no form. */
export function renderPortalErrorPage(title: string, message: string): string {
  return renderPage({ title, body: `<h1>${e(title)}</h1>\n<p class="muted">${e(message)}</p>` });
}
