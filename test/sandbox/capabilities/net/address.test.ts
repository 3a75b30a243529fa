/**
 * Pins: every spelling of an address that a URL parser or resolver accepts is classified by the
 * address it denotes, and only public unicast space counts as public. IPv6 forms that carry an
 * IPv4 address (mapped, compatible, NAT64, 6to4) are classified by that IPv4 address.
 */
import { describe, expect, it } from 'vitest';
import {
  classifyAddress,
  inspectAddress,
  isPublicAddress,
  parseIpAddress,
  parseIpv4Loose,
  permissionHost,
} from '../../../../sandbox/capabilities/net/address.ts';
import type { AddressClass } from '../../../../sandbox/capabilities/net/address.ts';

const TABLE: readonly (readonly [input: string, expected: AddressClass, canonical: string])[] = [
  // IPv4, canonical
  ['127.0.0.1', 'loopback', '127.0.0.1'],
  ['127.255.255.254', 'loopback', '127.255.255.254'],
  ['10.0.0.1', 'private', '10.0.0.1'],
  ['172.16.0.1', 'private', '172.16.0.1'],
  ['172.31.255.255', 'private', '172.31.255.255'],
  ['172.32.0.1', 'public', '172.32.0.1'],
  ['192.168.1.1', 'private', '192.168.1.1'],
  ['169.254.1.1', 'link-local', '169.254.1.1'],
  ['169.254.169.254', 'metadata', '169.254.169.254'],
  ['169.254.170.2', 'metadata', '169.254.170.2'],
  ['100.100.100.200', 'metadata', '100.100.100.200'],
  ['168.63.129.16', 'metadata', '168.63.129.16'],
  ['100.64.0.1', 'cgnat', '100.64.0.1'],
  ['100.127.255.255', 'cgnat', '100.127.255.255'],
  ['100.128.0.1', 'public', '100.128.0.1'],
  ['224.0.0.1', 'multicast', '224.0.0.1'],
  ['239.255.255.250', 'multicast', '239.255.255.250'],
  ['0.0.0.0', 'unspecified', '0.0.0.0'],
  ['0.1.2.3', 'reserved', '0.1.2.3'],
  ['255.255.255.255', 'broadcast', '255.255.255.255'],
  ['240.0.0.1', 'reserved', '240.0.0.1'],
  ['198.18.0.1', 'reserved', '198.18.0.1'],
  ['192.0.0.8', 'reserved', '192.0.0.8'],
  ['192.0.2.1', 'documentation', '192.0.2.1'],
  ['198.51.100.7', 'documentation', '198.51.100.7'],
  ['203.0.113.9', 'documentation', '203.0.113.9'],
  ['8.8.8.8', 'public', '8.8.8.8'],
  ['1.1.1.1', 'public', '1.1.1.1'],
  // IPv4, non-canonical spellings (inet_aton / WHATWG URL)
  ['2130706433', 'loopback', '127.0.0.1'],
  ['0x7f000001', 'loopback', '127.0.0.1'],
  ['017700000001', 'loopback', '127.0.0.1'],
  ['0177.0.0.1', 'loopback', '127.0.0.1'],
  ['0x7f.1', 'loopback', '127.0.0.1'],
  ['127.1', 'loopback', '127.0.0.1'],
  ['127.0.1', 'loopback', '127.0.0.1'],
  ['0x7F.0.0.0x1', 'loopback', '127.0.0.1'],
  ['012.0.0.1', 'private', '10.0.0.1'],
  ['0xa9.0xfe.0xa9.0xfe', 'metadata', '169.254.169.254'],
  ['2852039166', 'metadata', '169.254.169.254'],
  ['0', 'unspecified', '0.0.0.0'],
  ['0x', 'unspecified', '0.0.0.0'],
  ['127.0.0.1.', 'loopback', '127.0.0.1'],
  ['134744072', 'public', '8.8.8.8'],
  // IPv6
  ['::1', 'loopback', '::1'],
  ['[::1]', 'loopback', '::1'],
  ['0:0:0:0:0:0:0:1', 'loopback', '::1'],
  ['::', 'unspecified', '::'],
  ['[::]', 'unspecified', '::'],
  ['fe80::1', 'link-local', 'fe80::1'],
  ['fe80::1%eth0', 'link-local', 'fe80::1'],
  ['febf::1', 'link-local', 'febf::1'],
  ['fc00::1', 'unique-local', 'fc00::1'],
  ['fd00::1', 'unique-local', 'fd00::1'],
  ['fd00:ec2::254', 'metadata', 'fd00:ec2::254'],
  ['FD00:EC2:0:0:0:0:0:254', 'metadata', 'fd00:ec2::254'],
  ['fd20:ce::254', 'metadata', 'fd20:ce::254'],
  ['ff02::1', 'multicast', 'ff02::1'],
  ['fec0::1', 'reserved', 'fec0::1'],
  ['2001:db8::1', 'documentation', '2001:db8::1'],
  ['3fff::1', 'documentation', '3fff::1'],
  ['2001::1', 'reserved', '2001::1'],
  ['100::1', 'reserved', '100::1'],
  ['64:ff9b:1::1', 'reserved', '64:ff9b:1::1'],
  ['4000::1', 'reserved', '4000::1'],
  ['2606:4700:4700::1111', 'public', '2606:4700:4700::1111'],
  // IPv6 forms carrying an IPv4 address
  ['::ffff:127.0.0.1', 'loopback', '::ffff:7f00:1'],
  ['::ffff:7f00:1', 'loopback', '::ffff:7f00:1'],
  ['[::ffff:127.0.0.1]', 'loopback', '::ffff:7f00:1'],
  ['0:0:0:0:0:ffff:a00:1', 'private', '::ffff:a00:1'],
  ['::ffff:169.254.169.254', 'metadata', '::ffff:a9fe:a9fe'],
  ['::ffff:8.8.8.8', 'public', '::ffff:808:808'],
  ['::127.0.0.1', 'loopback', '::7f00:1'],
  ['::7f00:1', 'loopback', '::7f00:1'],
  ['::a00:1', 'private', '::a00:1'],
  ['64:ff9b::127.0.0.1', 'loopback', '64:ff9b::7f00:1'],
  ['64:ff9b::a9fe:a9fe', 'metadata', '64:ff9b::a9fe:a9fe'],
  ['64:ff9b::808:808', 'public', '64:ff9b::808:808'],
  ['2002:7f00:1::', 'loopback', '2002:7f00:1::'],
  ['2002:c0a8:101::1', 'private', '2002:c0a8:101::1'],
  ['2002:808:808::1', 'public', '2002:808:808::1'],
];

describe('address classification', () => {
  it.each(TABLE)('%s is %s (canonical %s)', (input, expected, canonical) => {
    expect(classifyAddress(input)).toBe(expected);
    expect(parseIpAddress(input)?.address).toBe(canonical);
    expect(isPublicAddress(input)).toBe(expected === 'public');
  });

  it('agrees with the WHATWG URL parser on every IPv4 spelling in the table', () => {
    for (const [input, , canonical] of TABLE) {
      if (input.includes(':') || input.endsWith('.') || input === '0x') continue;
      expect(new URL(`http://${input}/`).hostname).toBe(canonical);
    }
  });

  it.each([
    'localhost',
    'example.com',
    '',
    '1.2.3.4.5',
    '256.0.0.1',
    '127.0.0.256',
    '4294967296',
    '0x1g',
    '08.0.0.1',
    '1..1',
    '[127.0.0.1]',
    '127.0.0.1%eth0',
    ':::1',
    '1::2::3',
    'fe80::1%',
  ])('%j is not an address', (input) => {
    expect(parseIpAddress(input)).toBeUndefined();
    expect(classifyAddress(input)).toBeUndefined();
    expect(isPublicAddress(input)).toBe(false);
  });

  it('names the IPv4 address inside an IPv6 form', () => {
    expect(inspectAddress('::ffff:10.1.2.3')).toEqual({
      address: '::ffff:a01:203',
      family: 6,
      class: 'private',
      embeddedIpv4: '10.1.2.3',
    });
    expect(inspectAddress('fd00::1')?.embeddedIpv4).toBeUndefined();
  });

  it('parses the loose IPv4 forms to the same 32-bit number', () => {
    for (const form of ['127.0.0.1', '2130706433', '0x7f000001', '017700000001', '0177.0.0.1', '0x7f.1', '127.1']) {
      expect(parseIpv4Loose(form)).toBe(0x7f000001);
    }
    expect(parseIpv4Loose('0xffffffff')).toBe(0xffffffff);
    expect(parseIpv4Loose('0x100000000')).toBeUndefined();
  });

  it('names hosts as Deno does in permission messages: mapped IPv6 as IPv4, other IPv6 bracketed', () => {
    const host = (text: string) => {
      const parsed = parseIpAddress(text);
      if (parsed === undefined) throw new Error(`not an address: ${text}`);
      return permissionHost(parsed);
    };
    expect(host('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(host('0:0:0:0:0:ffff:a00:1')).toBe('10.0.0.1');
    expect(host('::7f00:1')).toBe('[::7f00:1]');
    expect(host('64:ff9b::7f00:1')).toBe('[64:ff9b::7f00:1]');
    expect(host('::1')).toBe('[::1]');
    expect(host('0x7f.1')).toBe('127.0.0.1');
  });
});
