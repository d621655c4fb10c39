// The CLI's progress renderer: a live line on a terminal, plain lines otherwise,
// with speed and time left from a moving window of samples.
import { describe, expect, test } from 'vitest';
import { ProgressBar, RateMeter, formatBytes, formatDuration, formatRate } from '../../../src/cli/progress.js';

const MiB = 1024 * 1024;

function sink(isTTY: boolean, columns = 120) {
  const chunks: string[] = [];
  return { chunks, out: { isTTY, columns, write: (t: string) => chunks.push(t) }, text: () => chunks.join('') };
}

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

// The format itself is test/unit/format/format.test.ts's: here, that the CLI uses it.
describe('formatting', () => {
  test('bytes, rates and durations as the app shows them', () => {
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 ** 4)).toBe('3.0 TiB');
    expect(formatRate(85.3 * MiB)).toBe('85.3 MiB/s');
    expect(formatDuration(205)).toBe('3 min 25 s');
  });
});

describe('RateMeter', () => {
  test('no rate before half a second of samples, then bytes per second', () => {
    const m = new RateMeter();
    m.add(0, 0);
    m.add(400, 4 * MiB);
    expect(m.rate()).toBeUndefined();
    m.add(1000, 10 * MiB);
    expect(m.rate()).toBe(10 * MiB);
  });

  test('only the window counts: an old slow start does not drag the speed down', () => {
    const m = new RateMeter(2000);
    m.add(0, 0);
    m.add(10_000, 1 * MiB); // slow start
    m.add(11_000, 21 * MiB);
    m.add(12_000, 41 * MiB);
    m.add(13_000, 61 * MiB);
    expect(m.rate()).toBe(20 * MiB);
  });

  test('progress going back (a restarted file) starts the samples over', () => {
    const m = new RateMeter();
    m.add(0, 0);
    m.add(1000, 50 * MiB);
    m.add(2000, 10 * MiB);
    expect(m.rate()).toBeUndefined();
    m.add(3000, 20 * MiB);
    expect(m.rate()).toBe(10 * MiB);
  });
});

describe('ProgressBar on a terminal', () => {
  test('redraws one line in place with percent, bar, bytes, speed and time left', () => {
    const s = sink(true), c = clock();
    const bar = new ProgressBar({ label: 'upload u1', out: s.out, now: c.now });
    bar.update(0, 100 * MiB, 'transferring');
    c.advance(1000);
    bar.update(25 * MiB, 100 * MiB, 'transferring');
    const last = s.chunks[s.chunks.length - 1]!;
    expect(last.startsWith('\r')).toBe(true);
    expect(last.endsWith('\x1b[K')).toBe(true);
    expect(last).toContain('upload u1');
    expect(last).toContain(' 25%');
    expect(last).toContain(`[${'#'.repeat(8)}${'-'.repeat(22)}]`);
    expect(last).toContain('25.0 MiB / 100 MiB');
    expect(last).toContain('25.0 MiB/s');
    expect(last).toContain('a few seconds left');
    expect(s.text()).not.toContain('\n');
  });

  test('redraws at most every redrawMs, except when the state changes', () => {
    const s = sink(true), c = clock();
    const bar = new ProgressBar({ label: 'x', out: s.out, now: c.now, redrawMs: 100 });
    bar.update(0, 100, 'transferring');
    c.advance(10);
    bar.update(10, 100, 'transferring');
    expect(s.chunks).toHaveLength(1);
    c.advance(10);
    bar.update(10, 100, 'paused');
    expect(s.chunks).toHaveLength(2);
    expect(s.chunks[1]).toContain('paused');
    expect(s.chunks[1]).not.toContain('left');
    c.advance(200);
    bar.update(20, 100, 'paused');
    expect(s.chunks).toHaveLength(3);
  });

  test('on 80 columns the short label and a narrower bar fit; the plain label stays for logs', () => {
    const s = sink(true, 80), c = clock();
    const bar = new ProgressBar({ label: 'upload upl_0123456789abcdef01234567', ttyLabel: 'upload', out: s.out, now: c.now });
    bar.update(0, 40 * 1024 ** 3, 'transferring');
    c.advance(1000);
    bar.update(12.5 * 1024 ** 3, 40 * 1024 ** 3, 'transferring');
    const line = s.chunks[s.chunks.length - 1]!.replace('\r', '').replace('\x1b[K', '');
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line).toMatch(/^upload\s+31%\s+\[#+-+\]\s+12\.5 GiB \/ 40\.0 GiB\s+12\.5 GiB\/s\s+a few seconds left$/);
    expect(bar.line(1, 2, 'paused')).toMatch(/^upload upl_0123456789abcdef01234567\s+50%/);
  });

  test('the line is cut to the terminal width', () => {
    const s = sink(true, 40), c = clock();
    const bar = new ProgressBar({ label: 'upload with a very long label indeed', out: s.out, now: c.now });
    bar.update(5, 10, 'transferring');
    expect(s.chunks[0]!.replace('\r', '').replace('\x1b[K', '').length).toBeLessThanOrEqual(39);
  });

  test('finish ends the live line and prints the message below it', () => {
    const s = sink(true), c = clock();
    const bar = new ProgressBar({ label: 'x', out: s.out, now: c.now });
    bar.update(10, 10, 'complete');
    bar.finish('done');
    expect(s.text().endsWith('\ndone\n')).toBe(true);
  });
});

describe('ProgressBar waiting, on a terminal', () => {
  test('the live line shows the wait and counts down to the next try instead of a frozen speed', () => {
    const s = sink(true), c = clock();
    const bar = new ProgressBar({ label: 'upload u1', ttyLabel: 'upload', out: s.out, now: c.now, redrawMs: 0 });
    const next = new Date(c.now() + 20_000).toISOString();
    bar.update(30 * MiB, 100 * MiB, 'transferring', { reason: 'service_unreachable', next_attempt_at: next });
    c.advance(7000);
    bar.update(30 * MiB, 100 * MiB, 'transferring', { reason: 'service_unreachable', next_attempt_at: next });
    const draws = s.chunks.map((t) => t.replace(/^\r/, '').replace(/\x1b\[K$/, ''));
    expect(draws[0]).toMatch(/^upload\s+30%\s+\[#+-+\]\s+30\.0 MiB \/ 100 MiB\s+waiting for the service \(retry in 20 s\)$/);
    expect(draws[1]).toMatch(/waiting for the service \(retry in 13 s\)$/);
    expect(draws.join('')).not.toMatch(/MiB\/s|left/);
  });
});

describe('ProgressBar without a terminal', () => {
  test('prints plain lines: one per state change and per tenth of the way, no escapes', () => {
    const s = sink(false), c = clock();
    const bar = new ProgressBar({ label: 'download d1', out: s.out, now: c.now });
    for (let i = 0; i <= 100; i++) {
      bar.update(i * MiB, 100 * MiB, i === 100 ? 'complete' : 'transferring');
      c.advance(100);
    }
    const lines = s.text().trimEnd().split('\n');
    expect(s.text()).not.toMatch(/\r|\x1b/);
    // 0%, 10%, ..., 90% while transferring, then complete at 100%.
    expect(lines).toHaveLength(11);
    expect(lines[0]).toMatch(/^download d1\s+0%\s+0 B \/ 100 MiB\s+transferring$/);
    expect(lines[5]).toMatch(/50%.*50\.0 MiB \/ 100 MiB.*10\.0 MiB\/s.*a few seconds left.*transferring/);
    expect(lines[10]).toMatch(/100%.*complete$/);
  });

  test('a pause and a resume each print a line', () => {
    const s = sink(false), c = clock();
    const bar = new ProgressBar({ label: 'x', out: s.out, now: c.now });
    bar.update(1, 100, 'transferring');
    bar.update(2, 100, 'paused');
    bar.update(2, 100, 'transferring');
    expect(s.text().trimEnd().split('\n').map((l) => l.split(/\s+/).pop())).toEqual(['transferring', 'paused', 'transferring']);
  });

  test('a wait for the service or the storage prints a line saying so, with the time to the next try, and its end another', () => {
    const s = sink(false), c = clock();
    const bar = new ProgressBar({ label: 'upload u1', out: s.out, now: c.now });
    bar.update(30 * MiB, 100 * MiB, 'transferring');
    const at = (ms: number) => new Date(c.now() + ms).toISOString();
    bar.update(30 * MiB, 100 * MiB, 'transferring', { reason: 'service_unreachable', next_attempt_at: at(20_000) });
    c.advance(5000);
    // The same wait again: no new line (its countdown is for the live line).
    bar.update(30 * MiB, 100 * MiB, 'transferring', { reason: 'service_unreachable', next_attempt_at: at(15_000) });
    bar.update(30 * MiB, 100 * MiB, 'transferring', { reason: 'store_error', next_attempt_at: at(0) });
    bar.update(31 * MiB, 100 * MiB, 'transferring');
    const lines = s.text().trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(/^upload u1\s+30%\s+30\.0 MiB \/ 100 MiB\s+waiting for the service \(retry in 20 s\)$/);
    expect(lines[2]).toMatch(/waiting for the storage \(retrying\)$/);
    expect(lines[3]).toMatch(/31%.*transferring$/);
  });

  test('finish prints only the message', () => {
    const s = sink(false), c = clock();
    const bar = new ProgressBar({ label: 'x', out: s.out, now: c.now });
    bar.finish('all done');
    expect(s.text()).toBe('all done\n');
  });
});
