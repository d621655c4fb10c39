// Sizes as the app shows them, in its window and in main's tray and
// notifications: binary units (KiB, MiB, GiB), one decimal below a hundred ("4.0 GiB", "18.3 GiB", "310 MiB").
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function bytes(n: number): string {
  let v = n, i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 100 ? 1 : 0)} ${UNITS[i]}`;
}
