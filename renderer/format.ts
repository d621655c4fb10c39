// Numbers as the window shows them: the one format of src/format (binary units,
// rounded times, smoothed speeds), re-exported for the renderer's components.
export { bytes, speed } from '../src/format/sizes.js';
export { duration, timeLeft } from '../src/format/times.js';
export { Meter } from '../src/format/meter.js';
