// Sizes and speeds as Ferry shows them everywhere (the window, the tray and
// notifications, the CLI, the Link and Portal pages, e-mails): binary units,
// one decimal below a hundred ("19 B", "1.5 KiB", "57.2 MiB", "310 MiB").
// Runs in Node and in browsers alike: it imports nothing.
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** "0 B", "1023 B", "1.0 KiB", "99.9 MiB", "100 MiB", "2.0 PiB". */
export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '';
  if (n < 0) return `-${bytes(-n)}`;
  let v = n, i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${Math.round(v)} B`;
  // Round first, then choose the style: 99.95 is "100 MiB", not "100.0 MiB", and 1023.96 KiB is "1.0 MiB".
  let shown = v < 100 ? Math.round(v * 10) / 10 : Math.round(v);
  if (shown >= 1024 && i < UNITS.length - 1) {
    shown = Math.round((shown / 1024) * 10) / 10;
    i++;
  }
  return `${shown < 100 ? shown.toFixed(1) : String(shown)} ${UNITS[i]}`;
}

/** "85.3 MiB/s": bytes a second, in the units of `bytes`. */
export const speed = (bytesPerSecond: number): string => `${bytes(Math.round(bytesPerSecond))}/s`;
