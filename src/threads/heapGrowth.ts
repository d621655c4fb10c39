// V8 lets an old generation grow to up to 4 times its live objects before it
// marks. The service's isolate holds about 45 MB live at a million files and
// reached 140-210 MB of heap, 330-340 MiB of RSS, between collections; a growing
// factor of 1.5 holds it near its live size for about 10% more of its CPU while
// registering (docs/benchmarks.md, bench:files and bench:dataset). The flag is
// process-wide: `ferry serve` sets it whichever store it uses, and so does
// `ferry objectstore`, whose requests allocate alike.
import { setFlagsFromString } from 'node:v8';

export function boundHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=50');
}
