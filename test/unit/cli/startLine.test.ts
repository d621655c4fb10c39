// `ferry start` where the desktop app cannot open: it points to the browser only where the app's window is built.
import { describe, expect, it } from 'vitest';
import { noDesktopLine } from '../../../src/cli/start.js';

describe('ferry start without the desktop app', () => {
  it('sends the user to the address below when the window is built', () => {
    expect(noDesktopLine('there is no display', true)).toBe('The desktop app cannot start here: there is no display. The same app is in your browser, at the address below.');
  });

  it('promises no address when the window is not built, and says how to build it', () => {
    const line = noDesktopLine('there is no display', false);
    expect(line).not.toContain('address below');
    expect(line).toContain('npm run build');
    expect(line).toMatch(/^The desktop app cannot start here: there is no display; /);
  });
});
