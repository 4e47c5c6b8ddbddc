import { BlockList, isIP } from 'node:net';
import type { Family, IpAddress } from './ip-address.js';

/** A block of addresses and what it is (the IANA registry's name, or the RFC's). */
export interface NamedRange {
  readonly cidr: string;
  readonly name: string;
}

/**
 * Node's BlockList, one per family: a single BlockList matches IPv4 addresses against IPv6
 * rules through their mapped form, so `::/3` would hold every IPv4 address and `::/0` allow it.
 */
class AddressBlocks {
  private readonly lists: Record<Family, BlockList> = { ipv4: new BlockList(), ipv6: new BlockList() };

  /** Adds `a.b.c.d/n` or `x::/n` (a bare address is a /32 or /128); throws with the bad entry named. */
  add(cidr: string): void {
    const [address = '', bitsText] = cidr.split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const bits = bitsText === undefined ? max : Number(bitsText);
    if (family === 0 || !Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`not a CIDR: ${cidr}`);
    const type: Family = family === 6 ? 'ipv6' : 'ipv4';
    this.lists[type].addSubnet(address, bits, type);
  }

  has(ip: IpAddress): boolean {
    return this.lists[ip.family].check(ip.address, ip.family);
  }
}

/** The operator's allowlist, `a.b.c.d/n, x::/n`; throws with the bad entry named. */
export class CidrList {
  private readonly blocks = new AddressBlocks();

  constructor(list: string) {
    for (const entry of list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      this.blocks.add(entry);
  }

  has(ip: IpAddress): boolean {
    return this.blocks.has(ip);
  }
}

/** Ranges that also say which of them holds an address, less the sub-blocks excepted from them. */
export class NamedRanges {
  private readonly all = new AddressBlocks();
  private readonly excepted = new AddressBlocks();
  private readonly each: Array<{ range: NamedRange; blocks: AddressBlocks }> = [];

  constructor(ranges: readonly NamedRange[], exceptions: readonly string[] = []) {
    for (const range of ranges) {
      const blocks = new AddressBlocks();
      blocks.add(range.cidr);
      this.all.add(range.cidr);
      this.each.push({ range, blocks });
    }
    for (const cidr of exceptions) this.excepted.add(cidr);
  }

  /** The first listed range holding the address, or null (also for an excepted sub-block). */
  find(ip: IpAddress): NamedRange | null {
    if (!this.all.has(ip) || this.excepted.has(ip)) return null;
    return this.each.find((e) => e.blocks.has(ip))?.range ?? null;
  }
}

/** Never reachable, whatever the operator allows: link-local, cloud metadata, unspecified, multicast, broadcast. */
export const alwaysRefused = new NamedRanges([
  { cidr: '0.0.0.0/8', name: '"this network", unspecified' },
  { cidr: '169.254.0.0/16', name: 'link-local, cloud metadata' },
  { cidr: '100.100.100.200/32', name: 'cloud metadata' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },
  { cidr: '::/128', name: 'unspecified' },
  { cidr: 'fd00:ec2::254/128', name: 'cloud metadata' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'ff00::/8', name: 'multicast' },
]);

/** Refused unless the operator allows them: loopback, RFC 1918, CGNAT, unique-local IPv6. */
export const privateRanges = new NamedRanges([
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '10.0.0.0/8', name: 'private-use' },
  { cidr: '172.16.0.0/12', name: 'private-use' },
  { cidr: '192.168.0.0/16', name: 'private-use' },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT)' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: 'fc00::/7', name: 'unique-local' },
]);

/**
 * Refused unless the operator allows them: the rest of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries that is not globally reachable, and IPv6 outside global unicast (2000::/3,
 * the only space IANA assigns for it). Mapped and well-known NAT64 addresses are not listed: they
 * are checked as the IPv4 address they stand for (ip-address.ts). The registries' globally
 * reachable sub-blocks of 192.0.0.0/24 and 2001::/23 (anycast services, AMT, AS112, ORCHIDv2,
 * DETs) stay reachable.
 */
export const specialPurposeRanges = new NamedRanges(
  [
    { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
    { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
    { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast' },
    { cidr: '198.18.0.0/15', name: 'benchmarking' },
    { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
    { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
    { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation' },
    { cidr: '100::/64', name: 'discard-only' },
    { cidr: '2001::/32', name: 'Teredo' },
    { cidr: '2001:2::/48', name: 'benchmarking' },
    { cidr: '2001::/23', name: 'IETF protocol assignments' },
    { cidr: '2001:db8::/32', name: 'documentation' },
    { cidr: '3fff::/20', name: 'documentation' },
    { cidr: '5f00::/16', name: 'segment routing (SRv6) SIDs' },
    { cidr: 'fec0::/10', name: 'deprecated site-local' },
    { cidr: '::/3', name: 'not IPv6 global unicast' },
    { cidr: '4000::/2', name: 'not IPv6 global unicast' },
    { cidr: '8000::/1', name: 'not IPv6 global unicast' },
  ],
  [
    '192.0.0.9/32',
    '192.0.0.10/32',
    '2001:1::1/128',
    '2001:1::2/128',
    '2001:1::3/128',
    '2001:3::/32',
    '2001:4:112::/48',
    '2001:20::/28',
    '2001:30::/28',
  ],
);
