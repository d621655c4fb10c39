// The window's addresses (renderer/store/route.ts): each screen and a transfer's
// details have one; anything else is Transfers.
import { describe, expect, test } from 'vitest';
import { hashOf, parseRoute, PLACES, historyStep } from '../../../renderer/store/route.js';

describe('hash routes', () => {
  test('each place has an address that leads back to it', () => {
    for (const place of PLACES) {
      const route = { place, detailsOf: undefined };
      expect(hashOf(route)).toBe(`#/${place}`);
      expect(parseRoute(hashOf(route))).toEqual(route);
    }
  });

  test("a transfer's details: #/transfers/upload:<id> and download:<id>", () => {
    expect(parseRoute('#/transfers/upload:u_123-abc')).toEqual({ place: 'transfers', detailsOf: 'upload:u_123-abc' });
    expect(parseRoute('#/transfers/download:d1')).toEqual({ place: 'transfers', detailsOf: 'download:d1' });
    expect(hashOf({ place: 'transfers', detailsOf: 'upload:u1' })).toBe('#/transfers/upload:u1');
    // Details belong to Transfers only.
    expect(hashOf({ place: 'send', detailsOf: 'upload:u1' })).toBe('#/send');
  });

  test('anything unknown is Transfers, without details', () => {
    for (const hash of ['', '#', '#/', '#/nowhere', '#/send/more', '#/transfers/upload:', '#/transfers/job:1', '#/transfers/upload:a/b', '#/receive?link=x', '#/__proto__', '#/constructor']) {
      expect(parseRoute(hash), hash).toEqual({ place: 'transfers', detailsOf: undefined });
    }
  });

  test('Back and Forward in the desktop window: Alt+Left/Right, Cmd+[ and Cmd+], the mouse\'s back and forward buttons; nothing else', () => {
    expect(historyStep({ key: 'ArrowLeft', altKey: true })).toBe(-1);
    expect(historyStep({ key: 'ArrowRight', altKey: true })).toBe(1);
    expect(historyStep({ key: '[', metaKey: true })).toBe(-1);
    expect(historyStep({ key: ']', metaKey: true })).toBe(1);
    expect(historyStep({ button: 3 })).toBe(-1);
    expect(historyStep({ button: 4 })).toBe(1);
    for (const e of [{ key: 'ArrowLeft' }, { key: 'ArrowLeft', altKey: true, shiftKey: true }, { key: 'ArrowLeft', ctrlKey: true, altKey: true }, { key: '[' }, { button: 0, altKey: true }, { button: 2 }]) {
      expect(historyStep(e), JSON.stringify(e)).toBeUndefined();
    }
  });
});
