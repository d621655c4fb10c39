// The look Ferry shares between its window and the service's pages (the Link
// download page, the Portal upload page): colours for light and dark, the type
// scale, the 8 px spacing grid, radii, the focus ring and motion, as CSS custom
// properties. The renderer's build bundles them into its stylesheet
// (scripts/renderer.vite.config.ts); the service inlines them into each page
// (src/hosted/services/pageLayout.ts), whose CSP allows no stylesheet request.
// Light and dark follow the OS; the window may pin one with data-theme.

/**
 * Light theme colours; every text pair is at least WCAG AA. `line` draws
 * dividers and frames, light on purpose; `control-line` draws a form field's
 * border, which says where to type, at least 3:1 against bg, panel and side
 * (WCAG 1.4.11 non-text contrast).
 */
const LIGHT = {
  bg: '#f6f7f9', panel: '#ffffff', side: '#eef0f3', text: '#1c1f24', muted: '#5b6470', line: '#d9dde3', 'control-line': '#7b838e',
  accent: '#1f5fd1', 'accent-text': '#ffffff', ok: '#1d7a3c', bad: '#b3261e', wait: '#5b6470',
};
const DARK: typeof LIGHT = {
  bg: '#16181c', panel: '#1e2126', side: '#1a1c20', text: '#e8eaed', muted: '#a3abb5', line: '#343a42', 'control-line': '#6e7682',
  accent: '#6ea2ff', 'accent-text': '#0b1220', ok: '#5fd08a', bad: '#ff8a80', wait: '#a3abb5',
};

/** What does not change with the theme. */
const SCALE = {
  font: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  // Type: small print, body, section titles, page titles.
  'size-small': '12px', 'size-body': '13px', 'size-title-2': '15px', 'size-title': '20px',
  // The 8 px grid (and its half, for tight rows).
  'space-half': '4px', 'space-1': '8px', 'space-2': '16px', 'space-3': '24px', 'space-4': '32px',
  'radius-control': '6px', 'radius-row': '8px', 'radius-card': '10px',
  'focus-ring': '2px solid var(--accent)', 'focus-offset': '2px',
  motion: '150ms',
};

const props = (o: Record<string, string>) => Object.entries(o).map(([k, v]) => `--${k}:${v};`).join('');

/** The stylesheet of the tokens: the light theme, dark when the OS says so (unless pinned light), and each pinned. */
export const TOKENS_CSS = [
  `:root{${props(SCALE)}${props(LIGHT)}color-scheme:light}`,
  `@media (prefers-color-scheme:dark){:root:not([data-theme='light']){${props(DARK)}color-scheme:dark}}`,
  `:root[data-theme='dark']{${props(DARK)}color-scheme:dark}`,
].join('\n');

/**
 * The text colour that reads on an accent of the caller's choosing (a Team's
 * branding colour): white or near-black, whichever contrasts more (WCAG luminance).
 */
export function textOn(hex: string): string {
  const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex);
  if (!m) return LIGHT['accent-text'];
  const h = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join('') : m[1]!;
  const lum = [0, 2, 4]
    .map((i) => parseInt(h.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
  const dark = DARK['accent-text'];
  // Contrast with white is 1.05 / (L + 0.05); with #0b1220 (L ≈ 0.006) it is (L + 0.05) / 0.056.
  return 1.05 / (lum + 0.05) >= (lum + 0.05) / 0.056 ? '#ffffff' : dark;
}
