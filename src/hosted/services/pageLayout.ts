// The frame of the service's web pages (the Link download page, the Portal upload
// page): one centred column on the app's own tokens (src/format/tokens.ts:
// colours light and dark from the OS setting, type scale, 8 px grid, radii, focus
// ring), with buttons, fields and lists drawn as the app draws them. Inline CSS
// only, so a page needs no stylesheet request and its CSP can forbid every other source.
import { TOKENS_CSS, textOn } from '../../format/tokens.js';
import { DEFAULT_PRIMARY_COLOR } from './links.js';
import { escapeHtml as e } from './notify.js';

// The page's body text is the app's section size (15 px): a page is read at arm's length, often on a phone.
const CSS = `
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:var(--size-title-2)/1.5 var(--font);margin:0;background:var(--bg);color:var(--text)}
main{max-width:760px;margin:var(--space-4) auto;background:var(--panel);border:1px solid var(--line);border-radius:var(--radius-card);padding:var(--space-4)}
@media (max-width:800px){main{margin:0;border:0;border-radius:0;padding:var(--space-3) var(--space-2)}}
h1{font-size:var(--size-title);font-weight:600;margin:0 0 var(--space-1)}h2{font-size:var(--size-title-2);font-weight:600;margin:var(--space-3) 0 var(--space-1)}
p{margin:var(--space-1) 0}.muted{color:var(--muted)}.err{color:var(--bad)}.ok{color:var(--ok)}
a{color:var(--accent)}
a.btn,button{display:inline-flex;align-items:center;justify-content:center;min-height:36px;background:var(--panel);color:var(--text);border:1px solid var(--line);border-radius:var(--radius-control);padding:var(--space-1) var(--space-2);font:inherit;text-decoration:none;cursor:pointer}
a.btn:not(.ghost),button:not(.ghost):not(.remove){background:var(--accent);color:var(--accent-text);border-color:var(--accent);font-weight:600}
button:disabled{opacity:.55;cursor:not-allowed}
table{width:100%;border-collapse:separate;border-spacing:0;margin:var(--space-2) 0;border:1px solid var(--line);border-radius:var(--radius-row);background:var(--panel);font-variant-numeric:tabular-nums}
caption{text-align:left;padding-bottom:var(--space-half)}
td{padding:var(--space-1) var(--space-2) var(--space-1) 0;border-top:1px solid var(--line);word-break:break-all;vertical-align:middle}td:first-child{padding-left:var(--space-2)}
tr:first-child td{border-top:0}
td.size{text-align:right;white-space:nowrap;color:var(--muted);min-width:72px}
input,textarea,select{font:inherit;color:var(--text);background:var(--panel);padding:6px var(--space-1);border:1px solid var(--control-line);border-radius:var(--radius-control)}
td.pick{width:40px}td.pick input{width:18px;height:18px;margin:0;padding:0}
.actions{display:flex;flex-wrap:wrap;gap:var(--space-1);align-items:center}
:focus-visible{outline:var(--focus-ring);outline-offset:var(--focus-offset)}
@media (prefers-reduced-motion:reduce){*{transition:none!important}}
`;

export interface PageOptions {
  title: string;
  /** A Team's branding colour; absent, not a colour, or the service's default: the app's accent for each theme. */
  accent?: string;
  body: string;
  /** CSS of this page alone, after the shared rules. */
  css?: string;
  /** Markup after </main>: data and script tags. */
  tail?: string;
}

/** A branding colour of its own overrides the accent in both themes, with a text colour that reads on it. */
function accentCss(accent: string | undefined): string {
  if (!accent || accent.toLowerCase() === DEFAULT_PRIMARY_COLOR || !/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(accent)) return '';
  return `:root,:root:not([data-theme='light']){--accent:${accent};--accent-text:${textOn(accent)}}`;
}

export function renderPage(o: PageOptions): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${e(o.title)}</title>
<style>${TOKENS_CSS}${CSS}${accentCss(o.accent)}${o.css ?? ''}</style></head><body><main>
${o.body}
</main>${o.tail ?? ''}</body></html>`;
}
