// The one format of sizes, speeds and times (src/format), which the window, the
// tray, the CLI, the Link and Portal pages and e-mails all use.
import { describe, expect, test } from 'vitest';
import { bytes, speed } from '../../../src/format/sizes.js';
import { duration, timeLeft } from '../../../src/format/times.js';
import { TOKENS_CSS, textOn } from '../../../src/format/tokens.js';

const KiB = 1024, MiB = 1024 ** 2, GiB = 1024 ** 3, PiB = 1024 ** 5;

describe('bytes', () => {
  test.each([
    [0, '0 B'],
    [19, '19 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [57.2 * MiB, '57.2 MiB'],
    [99.94 * MiB, '99.9 MiB'],
    // Rounded first, then styled: never "100.0 MiB".
    [99.95 * MiB, '100 MiB'],
    [310 * MiB, '310 MiB'],
    // Never "1024 KiB": that is a MiB.
    [1023.96 * KiB, '1.0 MiB'],
    [1024 * MiB - 1, '1.0 GiB'],
    [18.3 * GiB, '18.3 GiB'],
    [PiB, '1.0 PiB'],
    // PiB is the largest unit.
    [2048 * PiB, '2048 PiB'],
  ])('%d bytes is %s', (n, shown) => {
    expect(bytes(n)).toBe(shown);
  });

  test('a fraction of a byte rounds; nothing shows for what is not a number', () => {
    expect(bytes(12.4)).toBe('12 B');
    expect(bytes(Number.NaN)).toBe('');
    expect(bytes(Infinity)).toBe('');
  });
});

describe('speed', () => {
  test('bytes a second in the same units', () => {
    expect(speed(0)).toBe('0 B/s');
    expect(speed(85.3 * MiB)).toBe('85.3 MiB/s');
    expect(speed(1023.6)).toBe('1.0 KiB/s');
  });
});

describe('time left', () => {
  test.each([
    [3, 'a few seconds left'],
    [44, 'about 40 s left'],
    [125, 'about 2 min left'],
    [3600, 'about 1 h left'],
    [80 * 60, 'about 1 h 20 min left'],
  ])('%d s is "%s"', (s, shown) => {
    expect(timeLeft(s)).toBe(shown);
  });

  test('unknown is empty', () => {
    expect(timeLeft(Infinity)).toBe('');
    expect(timeLeft(-1)).toBe('');
  });
});

describe('duration', () => {
  test.each([
    [0, '0 s'],
    [-5, '0 s'],
    [7, '7 s'],
    [120, '2 min'],
    [205, '3 min 25 s'],
    [3723, '1 h 2 min'],
    [7200, '2 h'],
    [27 * 3600, '1 d 3 h'],
  ])('%d s is "%s"', (s, shown) => {
    expect(duration(s)).toBe(shown);
  });
});

describe('visual tokens', () => {
  test('light and dark, the OS choice unless the window pins one', () => {
    expect(TOKENS_CSS).toMatch(/^:root\{[^}]*--accent:#1f5fd1;/);
    expect(TOKENS_CSS).toContain("@media (prefers-color-scheme:dark){:root:not([data-theme='light']){");
    expect(TOKENS_CSS).toContain(":root[data-theme='dark']{");
    for (const name of ['--size-body', '--space-2', '--radius-row', '--focus-ring', '--bg', '--text']) expect(TOKENS_CSS).toContain(`${name}:`);
  });

  test('text on a branding colour is white or near-black, whichever reads better', () => {
    expect(textOn('#1f5fd1')).toBe('#ffffff');
    expect(textOn('#ffd400')).toBe('#0b1220');
    expect(textOn('#fff')).toBe('#0b1220');
    expect(textOn('#000000')).toBe('#ffffff');
  });
});
