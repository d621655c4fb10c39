// Light, dark, or the OS's choice (the default), as a data attribute the stylesheet reads.
export type Theme = 'system' | 'light' | 'dark';

export function applyTheme(theme: string): void {
  const t: Theme = theme === 'light' || theme === 'dark' ? theme : 'system';
  if (t === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}
