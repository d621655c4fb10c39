// Times as Ferry shows them everywhere: the time a transfer has left (rounded,
// so it never jitters) and how long one took, in words with the same short units
// ("s", "min", "h"). Imports nothing: it runs in Node and in browsers.

/** "a few seconds left", "about 40 s left", "about 2 min left", "about 1 h 20 min left"; '' when unknown. */
export function timeLeft(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 10) return 'a few seconds left';
  if (seconds < 60) return `about ${Math.round(seconds / 10) * 10} s left`;
  const min = Math.round(seconds / 60);
  if (min < 60) return `about ${min} min left`;
  return `about ${hoursAndMinutes(min)} left`;
}

/** How long something took: "0 s", "7 s", "3 min 25 s", "1 h 2 min", "2 d 3 h". */
export function duration(seconds: number): string {
  const s = Number.isFinite(seconds) ? Math.max(0, Math.round(seconds)) : 0;
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const min = Math.round(s / 60);
  if (min < 24 * 60) return hoursAndMinutes(min);
  const h = Math.round(min / 60);
  return h % 24 ? `${Math.floor(h / 24)} d ${h % 24} h` : `${h / 24} d`;
}

/** 80 -> "1 h 20 min", 120 -> "2 h". */
function hoursAndMinutes(min: number): string {
  const h = Math.floor(min / 60), m = min % 60;
  return m ? `${h} h ${m} min` : `${h} h`;
}
