// A transfer's speed as people see it: bytes a second over the last few seconds
// of progress samples (so the number does not jitter), and a history of it for
// the speed graph. Used by the window and the Portal page; imports nothing.
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
