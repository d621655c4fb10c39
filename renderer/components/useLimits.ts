// The bandwidth limits for the Transfers status line: the agent's settings, read
// when Transfers opens and every half minute (a schedule may begin meanwhile, or
// the tray may pause them), and the words for this minute.
import { useEffect, useState } from 'react';
import { useApp } from '../store/context.js';
import { limitsLine, pauseForAnHour, resumeLimits } from '../../src/format/rateSchedule.js';
import type { LimitsProps } from './StatusLine.js';

const REFRESH_MS = 30_000;

export function useLimits(): LimitsProps {
  const settings = useApp((s) => s.settings);
  const loadSettings = useApp((s) => s.loadSettings);
  const saveSettings = useApp((s) => s.saveSettings);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    void loadSettings();
    const t = setInterval(() => {
      setNow(Date.now());
      void loadSettings();
    }, REFRESH_MS);
    return () => clearInterval(t);
  }, [loadSettings]);
  return {
    line: limitsLine(settings, now),
    onPause: () => void saveSettings(pauseForAnHour(Date.now())).then(() => setNow(Date.now())),
    onResume: () => void saveSettings(resumeLimits()).then(() => setNow(Date.now())),
  };
}
