// Numbers as the app shows them: binary units, rounded times, speeds smoothed.
import { bytes } from '../src/ipc/units.js';

export { bytes };

export const speed = (bytesPerSecond: number) => `${bytes(Math.round(bytesPerSecond))}/s`;

/** "about 2 min", "a few seconds", "about 1 h 20 min". */
export function timeLeft(seconds: number): string {
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 10) return 'a few seconds left';
  if (seconds < 60) return `about ${Math.round(seconds / 10) * 10} s left`;
  const min = Math.round(seconds / 60);
  if (min < 60) return `about ${min} min left`;
  return `about ${Math.floor(min / 60)} h ${min % 60} min left`;
}

/** Bytes a second over the last few seconds of progress samples, and a history of it for the speed graph. */
export class Meter {
  private samples: { t: number; bytes: number }[] = [];
  /** One speed a second or so, for the last five minutes. */
  readonly history: { t: number; rate: number }[] = [];
  add(t: number, bytes: number): void {
    const last = this.samples.at(-1);
    if (last && bytes < last.bytes) this.samples = [];
    if (last && last.bytes === bytes && t - last.t < 1000) return;
    this.samples.push({ t, bytes });
    while (this.samples.length > 2 && t - this.samples[0]!.t > 5000) this.samples.shift();
    const rate = this.rate();
    if (rate !== undefined && (this.history.length === 0 || t - this.history.at(-1)!.t >= 1000)) this.history.push({ t, rate });
    while (this.history.length > 0 && t - this.history[0]!.t > 5 * 60_000) this.history.shift();
  }
  rate(): number | undefined {
    const a = this.samples[0], b = this.samples.at(-1);
    if (!a || !b || b.t - a.t < 1000) return undefined;
    return ((b.bytes - a.bytes) * 1000) / (b.t - a.t);
  }
}
