// The per-disk gate: reader and writer limits, each priority, FIFO among waiters
// of a kind, new limits applied to those waiting, and the bound on a wait held
// back by the other kind's priority. Operations are promises the test settles.
import { describe, expect, it } from 'vitest';
import { DiskGate, type DiskLimits, type DiskOp } from '../../../src/agent/engine/diskGate.js';
import { mountsOf, majorMinor } from '../../../src/agent/engine/mounts.js';
import { diskIdOf } from '../../../src/agent/engine/disks.js';

const limits = (l: Partial<DiskLimits>): DiskLimits => ({ priority: 'mixed_read_writes', max_concurrent_readers: 0, max_concurrent_writers: 0, ...l });

/** Operations started through `gate`, each ended by the test with end(name). */
function harness(gate: DiskGate) {
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const done: Promise<unknown>[] = [];
  const op = (kind: DiskOp, name: string) => {
    done.push(
      gate.run(kind, () => {
        started.push(name);
        return new Promise<void>((r) => ends.set(name, r));
      }),
    );
  };
  const end = async (name: string) => {
    ends.get(name)!();
    await flush();
  };
  return { started, op, end, done };
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('DiskGate', () => {
  it('lets everything through at once when no limit is set', async () => {
    const gate = new DiskGate();
    const h = harness(gate);
    for (let i = 0; i < 5; i++) h.op('read', `r${i}`);
    for (let i = 0; i < 5; i++) h.op('write', `w${i}`);
    await flush();
    expect(h.started).toHaveLength(10);
    expect(gate.counts()).toMatchObject({ readers: 5, writers: 5, waiting_readers: 0, waiting_writers: 0 });
  });

  it('holds readers and writers to their limits, and starts waiters in the order they came', async () => {
    const gate = new DiskGate(limits({ max_concurrent_readers: 2, max_concurrent_writers: 1 }));
    const h = harness(gate);
    for (const n of ['r1', 'r2', 'r3', 'r4']) h.op('read', n);
    for (const n of ['w1', 'w2']) h.op('write', n);
    await flush();
    expect(h.started).toEqual(['r1', 'r2', 'w1']);
    expect(gate.counts()).toMatchObject({ readers: 2, writers: 1, waiting_readers: 2, waiting_writers: 1 });
    await h.end('r2');
    expect(h.started.at(-1)).toBe('r3');
    await h.end('r1');
    expect(h.started.at(-1)).toBe('r4');
    await h.end('w1');
    expect(h.started.at(-1)).toBe('w2');
    expect(gate.counts()).toMatchObject({ peak_readers: 2, peak_writers: 1 });
  });

  it('a newcomer does not pass those already waiting', async () => {
    const gate = new DiskGate(limits({ max_concurrent_readers: 1 }));
    const h = harness(gate);
    h.op('read', 'a');
    h.op('read', 'b');
    await flush();
    await h.end('a');
    h.op('read', 'c');
    await flush();
    expect(h.started).toEqual(['a', 'b']);
    await h.end('b');
    expect(h.started).toEqual(['a', 'b', 'c']);
  });

  it('prioritize_writes: no read starts while a write runs or waits; writes do not wait for reads', async () => {
    const gate = new DiskGate(limits({ priority: 'prioritize_writes', max_concurrent_writers: 1 }));
    const h = harness(gate);
    h.op('read', 'r1');
    await flush();
    h.op('write', 'w1');
    h.op('write', 'w2');
    h.op('read', 'r2');
    await flush();
    // w1 runs beside r1 (already reading); r2 waits for both writes.
    expect(h.started).toEqual(['r1', 'w1']);
    await h.end('w1');
    expect(h.started).toEqual(['r1', 'w1', 'w2']);
    await h.end('w2');
    expect(h.started).toEqual(['r1', 'w1', 'w2', 'r2']);
    expect(gate.counts()).toMatchObject({ reads_beside_writes: 0, reads_held_for_writes: 1, writes_held_for_reads: 0 });
  });

  it('prioritize_reads: no write starts while a read runs or waits', async () => {
    const gate = new DiskGate(limits({ priority: 'prioritize_reads' }));
    const h = harness(gate);
    h.op('read', 'r1');
    await flush();
    h.op('write', 'w1');
    h.op('read', 'r2');
    await flush();
    expect(h.started).toEqual(['r1', 'r2']);
    await h.end('r1');
    expect(h.started).toEqual(['r1', 'r2']);
    await h.end('r2');
    expect(h.started).toEqual(['r1', 'r2', 'w1']);
    // r2 went ahead of the waiting write: the priority at work.
    expect(gate.counts()).toMatchObject({ writes_beside_reads: 0, reads_beside_writes: 1 });
  });

  it('mixed_read_writes: reads and writes go side by side, and the counts say so', async () => {
    const gate = new DiskGate(limits({}));
    const h = harness(gate);
    h.op('write', 'w1');
    await flush();
    h.op('read', 'r1');
    await flush();
    expect(h.started).toEqual(['w1', 'r1']);
    expect(gate.counts()).toMatchObject({ reads: 1, writes: 1, reads_beside_writes: 1 });
  });

  it('a change of limits applies to those already waiting', async () => {
    const gate = new DiskGate(limits({ max_concurrent_readers: 1 }));
    const h = harness(gate);
    for (const n of ['a', 'b', 'c']) h.op('read', n);
    await flush();
    expect(h.started).toEqual(['a']);
    gate.configure(limits({ max_concurrent_readers: 0 }));
    await flush();
    expect(h.started).toEqual(['a', 'b', 'c']);
    // And the other way: a lower limit holds the next ones back until enough have ended.
    gate.configure(limits({ max_concurrent_readers: 2 }));
    h.op('read', 'd');
    await flush();
    expect(h.started).toEqual(['a', 'b', 'c']);
    await h.end('a');
    expect(h.started).toEqual(['a', 'b', 'c']);
    await h.end('b');
    expect(h.started.at(-1)).toBe('d');
    // A priority set while reads wait behind a write lets them go when it is lifted.
    const g2 = new DiskGate(limits({ priority: 'prioritize_writes' }));
    const h2 = harness(g2);
    h2.op('write', 'w');
    h2.op('read', 'r');
    await flush();
    expect(h2.started).toEqual(['w']);
    g2.configure(limits({ priority: 'mixed_read_writes' }));
    await flush();
    expect(h2.started).toEqual(['w', 'r']);
  });

  it('a read held back by prioritize_writes goes once it has waited maxHoldMs, not before', async () => {
    let now = 0;
    const gate = new DiskGate(limits({ priority: 'prioritize_writes' }), 1000, () => now);
    const h = harness(gate);
    h.op('write', 'w1');
    h.op('read', 'r1');
    await flush();
    now = 999;
    h.op('write', 'w2');
    await h.end('w1');
    expect(h.started).toEqual(['w1', 'w2']);
    now = 1000;
    h.op('write', 'w3');
    await h.end('w2');
    // Overdue: the read starts beside w3.
    expect(h.started).toEqual(['w1', 'w2', 'w3', 'r1']);
  });

  it('the slot is given back when the operation fails', async () => {
    const gate = new DiskGate(limits({ max_concurrent_writers: 1 }));
    await expect(gate.run('write', () => Promise.reject(new Error('EIO')))).rejects.toThrow('EIO');
    expect(gate.counts().writers).toBe(0);
    await expect(gate.run('write', async () => 'ok')).resolves.toBe('ok');
  });
});

describe('mounts', () => {
  it("takes Linux's device numbers apart and finds the device's mounts in mountinfo", () => {
    expect(majorMinor(0x10302)).toBe('259:2');
    expect(majorMinor(2049)).toBe('8:1');
    const info = [
      '22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw',
      '40 22 8:1 / /mnt/my\\040disk rw,relatime shared:2 - exfat /dev/sda1 rw',
      '41 22 8:1 /sub /srv/bound rw,relatime shared:2 - exfat /dev/sda1 rw',
    ].join('\n');
    expect(mountsOf(info, '8:1')).toEqual([
      { mountPoint: '/mnt/my disk', device: '/dev/sda1', fsType: 'exfat' },
      { mountPoint: '/srv/bound', device: '/dev/sda1', fsType: 'exfat' },
    ]);
    expect(mountsOf(info, '9:9')).toEqual([]);
  });

  it('gives a disk the same id for the same mount point, whatever its device number', () => {
    expect(diskIdOf('/mnt/my disk')).toBe(diskIdOf('/mnt/my disk'));
    expect(diskIdOf('/mnt/my disk')).not.toBe(diskIdOf('/'));
    expect(diskIdOf('/')).toMatch(/^[0-9a-f]{16}$/);
  });
});
