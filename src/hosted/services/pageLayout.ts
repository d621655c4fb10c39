// The frame of the service's web pages (the Link download page, the Portal upload
// page): one centred column, the system font, neutral greys and one accent, light
// and dark from the OS setting, visible keyboard focus. Inline CSS only, so a
// page needs no stylesheet request and its CSP can forbid every other source.
import { escapeHtml as e } from './notify.js';

export const ACCENT = '#1f6feb';

const safeColor = (c: string) => (/^#[0-9a-fA-F]{3,8}$/.test(c) ? c : ACCENT);

const CSS = `
:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--text:#1d2330;--muted:#5d6778;--line:#e3e6eb;--field:#fff;--fieldline:#b9c0cb;--err:#b42318;--ok:#067647;--track:#e3e6eb;--on-accent:#fff;--link:#1a5fd0}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--card:#1d2128;--text:#e7eaee;--muted:#a3acb9;--line:#2e343d;--field:#14171c;--fieldline:#4a525e;--err:#ff8a80;--ok:#5fd38d;--track:#2e343d;--link:#7cb7ff}}
*{box-sizing:border-box}[hidden]{display:none!important}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:var(--bg);color:var(--text)}
main{max-width:760px;margin:40px auto;background:var(--card);border-radius:10px;padding:32px;box-shadow:0 1px 4px #0002}
@media (max-width:800px){main{margin:0;border-radius:0;padding:24px 16px}}
h1{font-size:20px;margin:0 0 8px}h2{font-size:15px;margin:24px 0 8px}
p{margin:8px 0}.muted{color:var(--muted)}.err{color:var(--err)}.ok{color:var(--ok)}
a{color:var(--link)}
a.btn,button{display:inline-block;background:var(--accent);color:var(--on-accent);border:1px solid var(--accent);border-radius:6px;padding:8px 16px;font:inherit;text-decoration:none;cursor:pointer}
a.btn.ghost,button.ghost{background:transparent;color:var(--text);border-color:var(--fieldline)}
button:disabled{opacity:.55;cursor:not-allowed}
table{width:100%;border-collapse:collapse;margin:16px 0}td{padding:8px 4px;border-top:1px solid var(--line);word-break:break-all}
td.size{text-align:right;white-space:nowrap;color:var(--muted);font-variant-numeric:tabular-nums}
input,textarea,select{font:inherit;color:var(--text);background:var(--field);padding:8px;border:1px solid var(--fieldline);border-radius:6px}
td.pick{width:32px}td.pick input{width:18px;height:18px;margin:0;padding:0}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
@media (prefers-reduced-motion:reduce){*{transition:none!important}}
`;

export interface PageOptions {
  title: string;
  /** The accent (a Team's branding colour); the default blue when absent or not a colour. */
  accent?: string;
  body: string;
  /** CSS of this page alone, after the shared rules. */
  css?: string;
  /** Markup after </main>: data and script tags. */
  tail?: string;
}

export function renderPage(o: PageOptions): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${e(o.title)}</title>
<style>${CSS}:root{--accent:${safeColor(o.accent ?? ACCENT)}}${o.css ?? ''}</style></head><body><main>
${o.body}
</main>${o.tail ?? ''}</body></html>`;
}
