// The WCAG contrast of a form field's border, as Chromium draws it: against the
// field's own background and against the first opaque background around it
// (WCAG 1.4.11 asks at least 3:1 of what identifies a control), light and dark.
import type { Locator } from '@playwright/test';

/** The lower of the two contrasts, for each colour scheme. */
export async function borderContrast(field: Locator): Promise<{ light: number; dark: number }> {
  const page = field.page();
  const out = { light: 0, dark: 0 };
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    // The page's code as text: the suite's tsconfig has no DOM types.
    out[scheme] = await field.evaluate(new Function('el', `
      const rgba = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
      const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
      const around = (node) => {
        for (let n = node; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor); if (c.a === 1) return c; }
        return { r: 255, g: 255, b: 255, a: 1 };
      };
      const lum = (c) => [c.r, c.g, c.b].map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
      const ratio = (x, y) => { const a = lum(x), b = lum(y); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
      const page = around(el.parentElement);
      const own = over(rgba(getComputedStyle(el).backgroundColor), page);
      const border = over(rgba(getComputedStyle(el).borderTopColor), page);
      return Math.min(ratio(border, page), ratio(border, own));
    `) as (el: unknown) => number);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return out;
}
