// Which IP addresses the service may connect to on a tenant's behalf: every
// address is classified (loopback, private, link-local, metadata, ...; null for
// a public one), and the operator's --allow-private-targets decides which of the
// non-public ones are allowed anyway. Pure: config.ts checks the flag with it.
import net from 'node:net';

/** What a non-public address is. `metadata`: a cloud host's metadata or credentials service. */
export type AddressKind = 'metadata' | 'unspecified' | 'loopback' | 'private' | 'shared' | 'link-local' | 'unique-local' | 'multicast' | 'reserved';

/** A parsed CIDR: 4 or 16 bytes and a prefix length. */
export interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

/** --allow-private-targets as the operator gave it: `all` (true), and/or the CIDRs allowed. */
export interface PrivateTargets {
  all: boolean;
  cidrs: string[];
}

function v4Bytes(ip: string): Uint8Array {
  return Uint8Array.from(ip.split('.').map(Number));
}

/** 16 bytes of a valid IPv6 address (checked by net.isIPv6 first), a dotted IPv4 tail included. */
function v6Bytes(ip: string): Uint8Array {
  let text = ip;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...v4Bytes(dotted[1]!));
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const r = groups(rest);
  const all = rest === undefined ? h : [...h, ...new Array<number>(8 - h.length - r.length).fill(0), ...r];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  if (tail.length) out.set(tail, 12);
  return out;
}

/** The bytes of an IP address (brackets allowed around IPv6); undefined when `host` is not one. */
export function ipBytes(host: string): Uint8Array | undefined {
  const ip = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = net.isIP(ip);
  if (family === 4) return v4Bytes(ip);
  if (family === 6) return v6Bytes(ip);
  return undefined;
}

/** `ADDRESS/BITS`, or a bare address (one host); throws a plain Error naming what is wrong. */
export function parseCidr(text: string): Cidr {
  const slash = text.indexOf('/');
  const addr = slash < 0 ? text : text.slice(0, slash);
  const bytes = ipBytes(addr);
  if (!bytes) throw new Error(`"${text}" is not an IP address or CIDR`);
  const max = bytes.length * 8;
  const bitsText = slash < 0 ? String(max) : text.slice(slash + 1);
  const bits = Number(bitsText);
  if (!/^\d{1,3}$/.test(bitsText) || bits > max) throw new Error(`"${text}": the prefix length must be 0 to ${max}`);
  return { bytes, bits };
}

function within(b: Uint8Array, c: Cidr): boolean {
  if (b.length !== c.bytes.length) return false;
  for (let i = 0, left = c.bits; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((b[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

const table = (rows: [string, AddressKind][]) => rows.map(([cidr, kind]) => ({ cidr: parseCidr(cidr), kind }));

/**
 * Metadata and credentials services of cloud hosts: AWS (also ECS task and EKS
 * pod credentials, and IMDS over IPv6), GCP, Azure, Oracle (169.254.169.254 and
 * the older 192.0.0.192), Alibaba, and Azure's WireServer (a public address that
 * only its VMs reach). `--allow-private-targets true` does not open these.
 */
const METADATA = table(
  ['169.254.169.254', '169.254.170.2', '169.254.170.23', 'fd00:ec2::254', 'fd00:ec2::23', '100.100.100.200', '192.0.0.192', '168.63.129.16'].map((a) => [a, 'metadata']),
);

/** IPv4 ranges that are not the public internet (IANA's special-purpose registry). */
const V4 = table([
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
]);

const V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  ['100::/64', 'reserved'],
  ['2001:2::/48', 'reserved'],
  ['2001:db8::/32', 'reserved'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
]);

/**
 * The IPv4 addresses an IPv6 address carries and reaches through: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::/96), 6to4 (2002:AABB:CCDD::) and Teredo (its server, and its client
 * with the bits inverted).
 */
function embeddedV4(b: Uint8Array): Uint8Array[] {
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const last = b.subarray(12, 16);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return [last];
  if (zero(0, 12)) return [last];
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return [last];
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return [last];
  if (b[0] === 0x20 && b[1] === 0x02) return [b.subarray(2, 6)];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [b.subarray(4, 8), last.map((x) => x ^ 0xff)];
  return [];
}

function classifyBytes(b: Uint8Array): AddressKind | null {
  for (const r of METADATA) if (within(b, r.cidr)) return r.kind;
  if (b.length === 4) {
    for (const r of V4) if (within(b, r.cidr)) return r.kind;
    return null;
  }
  // The unspecified and loopback addresses first: they are also "IPv4-compatible" (::0.0.0.0, ::0.0.0.1).
  for (const r of V6.slice(0, 2)) if (within(b, r.cidr)) return r.kind;
  for (const v4 of embeddedV4(b)) {
    const kind = classifyBytes(v4);
    if (kind) return kind;
  }
  for (const r of V6) if (within(b, r.cidr)) return r.kind;
  return null;
}

/** What `ip` is when it is not a public address; null for a public one. Throws on a non-IP. */
export function classifyAddress(ip: string): AddressKind | null {
  const b = ipBytes(ip);
  if (!b) throw new Error(`not an IP address: ${ip}`);
  return classifyBytes(b);
}

/** --allow-private-targets: off (false, the default), true, or comma-separated CIDRs. Throws a plain Error for a bad value. */
export function parsePrivateTargets(value: string | undefined): PrivateTargets {
  if (value === undefined || /^(0|false|no|off)$/i.test(value.trim())) return { all: false, cidrs: [] };
  if (/^(1|true|yes|on)$/i.test(value.trim())) return { all: true, cidrs: [] };
  const cidrs = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (cidrs.length === 0) throw new Error(`--allow-private-targets takes true, false or CIDRs like 10.0.0.0/8,127.0.0.1/32; got "${value}"`);
  for (const c of cidrs) {
    try {
      parseCidr(c);
    } catch (err) {
      throw new Error(`--allow-private-targets takes true, false or CIDRs like 10.0.0.0/8,127.0.0.1/32: ${(err as Error).message}`);
    }
  }
  return { all: false, cidrs };
}

/** The operator's allowance, parsed once, and the check every outbound address goes through. */
export class TargetPolicy {
  private readonly cidrs: Cidr[];

  constructor(readonly allowed: PrivateTargets) {
    this.cidrs = allowed.cidrs.map(parseCidr);
  }

  /**
   * Why `ip` may not be connected to (its kind), or null when it may: a public
   * address; one inside an allowed CIDR (an IPv4-mapped address matches as its
   * IPv4); any other with `true`, but a metadata address.
   */
  refusal(ip: string): AddressKind | null {
    const b = ipBytes(ip);
    if (!b) throw new Error(`not an IP address: ${ip}`);
    const kind = classifyBytes(b);
    if (!kind) return null;
    const mapped = b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff ? b.subarray(12) : undefined;
    if (this.cidrs.some((c) => within(b, c) || (mapped !== undefined && within(mapped, c)))) return null;
    if (this.allowed.all && kind !== 'metadata') return null;
    return kind;
  }
}
