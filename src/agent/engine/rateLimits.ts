// The bandwidth limits in force: the settings (plain limits, schedules, a pause)
// turned into the rates of the two buckets, looked at again each second while a
// schedule or a pause may change them, so a boundary takes effect within about
// a second on the bytes in flight. The clock is injectable: a test's fake clock
// drives the schedule and the buckets alike.
import { rateState, type RateSettings, type RateState } from '../../format/rateSchedule.js';
import { realClock, TokenBucket, type Clock } from './tokenBucket.js';

export class RateLimits {
  readonly upload: TokenBucket;
  readonly download: TokenBucket;
  private settings: RateSettings = { upload_rate_limit: 0, download_rate_limit: 0, rate_schedules: [], rate_limits_paused_until: null };
  private timer: unknown;
  private closed = false;

  constructor(readonly clock: Clock = realClock) {
    this.upload = new TokenBucket(clock);
    this.download = new TokenBucket(clock);
  }

  /** New settings: the rates change at once. */
  set(settings: RateSettings): void {
    this.settings = settings;
    this.apply();
  }

  /** The limits now and until when. */
  state(): RateState {
    return rateState(this.settings, this.clock.now());
  }

  private apply(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    const s = this.state();
    this.upload.setRate(s.upload);
    this.download.setRate(s.download);
    // Nothing can change by itself without a schedule or a pause.
    if (this.settings.rate_schedules.length > 0 || s.pausedUntil !== null) this.timer = this.clock.setTimeout(() => this.apply(), 1000);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    // Whoever still waits goes on unlimited: the transfers are stopping.
    this.upload.setRate(0);
    this.download.setRate(0);
  }
}
