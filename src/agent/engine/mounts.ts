// Where a device is mounted, for the disks the agent lists. Linux says it in
// /proc/self/mountinfo (mount point, device, file system type); elsewhere, and
// where mountinfo names no mount of the device (some containers), the mount
// point is the highest folder above the path still on the same device: the
// volume's root on macOS (/ or /Volumes/NAME; for the Data volume, where its
// firmlink begins, e.g. /Users), the drive's root on Windows (C:\).
import fs from 'node:fs';
import path from 'node:path';

export interface Mount {
  mountPoint: string;
  /** e.g. /dev/nvme0n1p2; null where the system does not say. */
  device: string | null;
  fsType: string | null;
}

/** Linux's major and minor numbers of a dev_t, as glibc's gnu_dev_major/minor take them apart. */
export function majorMinor(dev: number): string {
  const big = BigInt(dev);
  const major = ((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn);
  const minor = (big & 0xffn) | ((big >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

/** mountinfo's escapes (\040 for a space, ...). */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The mounts of mountinfo's text with device `mm` ("major:minor"), as [mount point, device, type]. */
export function mountsOf(mountinfo: string, mm: string): Mount[] {
  const found: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    if (f[2] !== mm || !f[4]) continue;
    const [fsType, source] = right.split(' ');
    found.push({ mountPoint: unescape(f[4]), device: source ? unescape(source) : null, fsType: fsType ?? null });
  }
  return found;
}

const inside = (p: string, dir: string) => dir === p || dir === path.parse(dir).root || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** The highest folder above `p` (an existing path) on device `dev`. */
function topOnDevice(p: string, dev: number): string {
  let at = path.resolve(p);
  for (let i = 0; i < 4096; i++) {
    const up = path.dirname(at);
    if (up === at) return at;
    try {
      if (fs.statSync(up).dev !== dev) return at;
    } catch {
      return at;
    }
    at = up;
  }
  return at;
}

/** The mount of device `dev` that holds `p` (an existing path on that device). */
export function mountOf(p: string, dev: number): Mount {
  if (process.platform === 'linux') {
    try {
      const all = mountsOf(fs.readFileSync('/proc/self/mountinfo', 'utf8'), majorMinor(dev));
      // Bind mounts share a device: the one whose mount point holds the path, the longest.
      const holding = all.filter((m) => inside(path.resolve(p), m.mountPoint)).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
      if (holding[0]) return holding[0];
    } catch {
      // No /proc: as on the other systems.
    }
  }
  return { mountPoint: topOnDevice(p, dev), device: null, fsType: null };
}
