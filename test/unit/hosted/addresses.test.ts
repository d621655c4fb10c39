// The address classifier behind the outbound guard: every non-public range,
// the spellings a URL normalizes to an address, IPv6 forms that carry an IPv4
// address, and the operator's allowance (--allow-private-targets).
import { describe, expect, test } from 'vitest';
import { classifyAddress, parseCidr, parsePrivateTargets, TargetPolicy } from '../../../src/hosted/net/addresses.js';
import { resolveHostedConfig } from '../../../src/hosted/config.js';
import { thisComputerFlags } from '../../../src/cli/thisComputer.js';

describe('classifyAddress', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
  ])('%s is %s', (ip, kind) => {
    expect(classifyAddress(ip)).toBe(kind);
  });

  test.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '169.253.255.255', '223.255.255.255', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '2002:0808:0808::1', '64:ff9b::808:808'])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toBeNull();
  });

  test('IPv6 forms that carry an IPv4 address are what that address is', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('loopback'); // IPv4-mapped
    expect(classifyAddress('::ffff:7f00:1')).toBe('loopback');
    expect(classifyAddress('::ffff:169.254.169.254')).toBe('metadata');
    expect(classifyAddress('::ffff:a00:1')).toBe('private');
    expect(classifyAddress('::127.0.0.1')).toBe('loopback'); // IPv4-compatible
    expect(classifyAddress('::ffff:0:10.0.0.1')).toBe('private'); // SIIT
    expect(classifyAddress('64:ff9b::7f00:1')).toBe('loopback'); // NAT64
    expect(classifyAddress('64:ff9b::a9fe:a9fe')).toBe('metadata');
    expect(classifyAddress('64:ff9b:1::1')).toBe('private'); // local-use NAT64
    expect(classifyAddress('2002:7f00:1::1')).toBe('loopback'); // 6to4
    expect(classifyAddress('2002:c0a8:101::1')).toBe('private');
    // Teredo: server 65.54.227.120 (public), client 192.168.1.1 stored inverted.
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:3f57:fefe')).toBe('private');
    expect(classifyAddress('2001:0:4136:e378:8000:63bf:f7f7:f7f7')).toBeNull();
  });

  test('odd spellings a URL normalizes are caught as the address they are', () => {
    for (const raw of ['http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0x7f000001/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:127.0.0.1]/']) {
      const host = new URL(raw).hostname;
      expect(classifyAddress(host.replace(/^\[|\]$/g, '')), raw).toBe('loopback');
    }
    expect(classifyAddress(new URL('http://0xa9.0xfe.0xa9.0xfe/').hostname)).toBe('metadata');
    expect(classifyAddress(new URL('http://2852039166/').hostname)).toBe('metadata');
  });

  test('a name is not an address', () => {
    expect(() => classifyAddress('localhost')).toThrow(/not an IP address/);
  });
});

describe('the operator allowance', () => {
  test('off by default, true, false, or CIDRs (a bare address is one host)', () => {
    expect(parsePrivateTargets(undefined)).toEqual({ all: false, cidrs: [] });
    expect(parsePrivateTargets('false')).toEqual({ all: false, cidrs: [] });
    expect(parsePrivateTargets('true')).toEqual({ all: true, cidrs: [] });
    expect(parsePrivateTargets(' 10.0.0.0/8, 127.0.0.1/32 ,fd00::/8,192.168.1.5')).toEqual({ all: false, cidrs: ['10.0.0.0/8', '127.0.0.1/32', 'fd00::/8', '192.168.1.5'] });
    expect(parseCidr('192.168.1.5')).toEqual({ bytes: Uint8Array.from([192, 168, 1, 5]), bits: 32 });
  });

  test.each(['10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/x', 'localhost', '10.0.0.256/8', ',', '10.0.0.0/8,nope'])('"%s" is refused, naming the flag', (v) => {
    expect(() => parsePrivateTargets(v)).toThrow(/--allow-private-targets/);
  });

  test('the flag and FERRY_ALLOW_PRIVATE_TARGETS reach the config, checked', () => {
    expect(resolveHostedConfig({}, {}).allowPrivateTargets).toEqual({ all: false, cidrs: [] });
    expect(resolveHostedConfig({ 'allow-private-targets': '127.0.0.1/32' }, {}).allowPrivateTargets).toEqual({ all: false, cidrs: ['127.0.0.1/32'] });
    expect(resolveHostedConfig({}, { FERRY_ALLOW_PRIVATE_TARGETS: 'true' }).allowPrivateTargets).toEqual({ all: true, cidrs: [] });
    expect(resolveHostedConfig({ 'allow-private-targets': 'false' }, { FERRY_ALLOW_PRIVATE_TARGETS: 'true' }).allowPrivateTargets.all).toBe(false);
    expect(() => resolveHostedConfig({ 'allow-private-targets': '10.0.0.0/40' }, {})).toThrow(/--allow-private-targets/);
  });

  test('off: every non-public address is refused, public ones pass', () => {
    const p = new TargetPolicy(parsePrivateTargets(undefined));
    expect(p.refusal('127.0.0.1')).toBe('loopback');
    expect(p.refusal('::ffff:10.0.0.1')).toBe('private');
    expect(p.refusal('8.8.8.8')).toBeNull();
  });

  test('true: every address but the metadata services', () => {
    const p = new TargetPolicy(parsePrivateTargets('true'));
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '192.168.0.10', 'fd12::1', '169.254.1.1']) expect(p.refusal(ip), ip).toBeNull();
    for (const ip of ['169.254.169.254', '::ffff:169.254.169.254', 'fd00:ec2::254', '100.100.100.200']) expect(p.refusal(ip), ip).toBe('metadata');
  });

  test('CIDRs: only those; an IPv4-mapped address matches as its IPv4; a metadata address only when a CIDR holds it', () => {
    const p = new TargetPolicy(parsePrivateTargets('127.0.0.1/32,10.0.0.0/8'));
    expect(p.refusal('127.0.0.1')).toBeNull();
    expect(p.refusal('::ffff:127.0.0.1')).toBeNull();
    expect(p.refusal('127.0.0.2')).toBe('loopback');
    expect(p.refusal('::1')).toBe('loopback');
    expect(p.refusal('10.200.0.1')).toBeNull();
    expect(p.refusal('192.168.0.1')).toBe('private');
    expect(p.refusal('169.254.169.254')).toBe('metadata');
    expect(new TargetPolicy(parsePrivateTargets('169.254.169.254/32')).refusal('169.254.169.254')).toBeNull();
    expect(new TargetPolicy(parsePrivateTargets('fd00::/8')).refusal('fd12::1')).toBeNull();
  });
});

describe('ferry start (this computer)', () => {
  test('allows private targets unless the flag or its variable says otherwise', () => {
    const flagsOf = (f: Record<string, string | undefined>, env: NodeJS.ProcessEnv = {}) => resolveHostedConfig(thisComputerFlags(f, env), env).allowPrivateTargets;
    expect(flagsOf({})).toEqual({ all: true, cidrs: [] });
    expect(flagsOf({ 'allow-private-targets': 'false' })).toEqual({ all: false, cidrs: [] });
    expect(flagsOf({}, { FERRY_ALLOW_PRIVATE_TARGETS: '192.168.1.0/24' })).toEqual({ all: false, cidrs: ['192.168.1.0/24'] });
    // Still not the metadata services.
    expect(new TargetPolicy(flagsOf({})).refusal('169.254.169.254')).toBe('metadata');
  });
});
