// The line at the top of Transfers: speed up and down, how far the unfinished
// transfers are, and how many run, wait in the queue, are paused or failed. Only
// the counts are a live region: speeds change every second and would be read
// out every second. In a browser the tab's title carries the same news, so that
// a transfer can be watched from another tab.
import { useEffect } from 'react';
import { bytes, speed } from '../format.js';
import { Icon } from './icons.js';
import type { Totals } from './transferFacts.js';
import type { LimitsLine } from '../../src/format/rateSchedule.js';

const TITLE = 'Ferry';

/** The tab's title without speeds: how many are active, else the app's name. */
export const activeTitle = (active: number) => (active > 0 ? `${active} active · ${TITLE}` : TITLE);

/** What the tab's title says: the speeds while something moves, else how many are active, else the app's name. */
export function tabTitle(s: Totals): string {
  const moving = [s.up > 0 && `↑ ${speed(s.up)}`, s.down > 0 && `↓ ${speed(s.down)}`].filter(Boolean);
  if (moving.length > 0) return `${moving.join(' ')} · ${TITLE}`;
  return activeTitle(s.active);
}

/** The bandwidth limits in force, with the button that pauses or resumes them. */
export interface LimitsProps {
  line: LimitsLine | undefined;
  onPause(): void;
  onResume(): void;
}

export function StatusLine({ totals: s, browser, limits }: { totals: Totals; browser: boolean; limits?: LimitsProps }) {
  const title = tabTitle(s);
  useEffect(() => {
    if (!browser) return;
    document.title = title;
  }, [browser, title]);
  const counts = [`${s.active} active`, `${s.queued} queued`, ...(s.paused > 0 ? [`${s.paused} paused`] : []), `${s.failed} failed`].join(' · ');
  const pct = s.size > 0 ? Math.floor((s.done / s.size) * 100) : 100;
  return (
    <div className="status-line">
      <span className="speeds">
        <span className="speed-up"><Icon name="up" label="Upload speed" /> {speed(s.up)}</span>
        <span className="speed-down"><Icon name="down" label="Download speed" /> {speed(s.down)}</span>
      </span>
      {s.size > 0 && (
        <span className="overall">
          <span className="sr-only">Overall: </span>{bytes(s.done)} of {bytes(s.size)}
          <span className="overall-bar" role="progressbar" aria-label="Overall progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}><span className="fill" style={{ width: `${pct}%` }} /></span>
        </span>
      )}
      <span role="status" aria-live="polite" className={`counts${s.failed > 0 ? ' has-failed' : ''}`}>{counts}</span>
      {limits?.line && (
        <span className="limits">
          <span role="status" className="limits-words">{limits.line.words}</span>
          {limits.line.action === 'pause'
            ? <button type="button" className="link" onClick={limits.onPause}>Pause limits for an hour</button>
            : <button type="button" className="link" onClick={limits.onResume}>Resume limits</button>}
        </span>
      )}
    </div>
  );
}
