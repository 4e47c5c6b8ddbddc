import { isIP } from 'node:net';

export type Family = 'ipv4' | 'ipv6';

/** An IP address in its one canonical spelling, so equal addresses compare equal as strings. */
export interface IpAddress {
  readonly address: string;
  readonly family: Family;
}

/** What inet_aton and the WHATWG URL parser read as IPv4: 2130706433, 0x7f.1, 0177.0.0.1, 127.1. */
const numericHost = /^[0-9a-fx.]+$/i;

/**
 * The canonical spelling of an IP literal, or null for a host name. Brackets and an IPv6 zone id are
 * dropped (a zone picks the link, not the address). IPv4 in any numeric form becomes dotted decimal and
 * IPv6 the RFC 5952 form (lower case, longest zero run compressed, no dotted tail), both as the WHATWG
 * URL parser spells them, so a literal is checked as the address a socket would reach.
 */
export function canonicalIp(host: string): IpAddress | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const [head = '', zone] = bare.split('%');
  try {
    if (isIP(head) === 6) return { address: new URL(`http://[${head}]/`).hostname.slice(1, -1), family: 'ipv6' };
    if (zone !== undefined || !numericHost.test(bare)) return null;
    const parsed = new URL(`http://${bare}/`).hostname;
    return isIP(parsed) === 4 ? { address: parsed, family: 'ipv4' } : null;
  } catch {
    // Not a URL host at all (1.2.3.4.5, 0x1g): a name, which will not resolve.
    return null;
  }
}

/** The 16 bytes of a canonical IPv6 address. */
function ipv6Bytes(canonical: string): number[] {
  const words = (part: string): number[] => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const [head = '', tail] = canonical.split('::');
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  const all = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return all.flatMap((w) => [w >> 8, w & 255]);
}

const ipv4 = (bytes: readonly number[], mask = 0): IpAddress => ({
  address: bytes.map((b) => (b ^ mask) & 255).join('.'),
  family: 'ipv4',
});

/**
 * What an address is checked as. An IPv4 address and most IPv6 ones: themselves. IPv4-mapped
 * (::ffff:0:0/96) and well-known NAT64 (64:ff9b::/96) addresses reach the IPv4 host they embed
 * through the kernel or a translator, so they are checked as that address alone. Tunnel and
 * translation forms are checked as themselves and as every IPv4 address they carry: 6to4
 * (2002::/16), Teredo (2001::/32, server and obfuscated client), IPv4-compatible (::/96) and
 * local-use NAT64 (64:ff9b:1::/48, read as a /96 translation prefix as the well-known one is: the
 * range is refused unless the operator allows it, who then knows the prefix length in use).
 */
export function checkedAs(ip: IpAddress): IpAddress[] {
  if (ip.family === 'ipv4') return [ip];
  const b = ipv6Bytes(ip.address);
  const zeros = (from: number, to: number): boolean => b.slice(from, to).every((x) => x === 0);
  const tail = b.slice(12, 16);
  const nat64 = b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b;
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return [ipv4(tail)];
  if (nat64 && zeros(4, 12)) return [ipv4(tail)];
  if (b[0] === 0x20 && b[1] === 0x02) return [ip, ipv4(b.slice(2, 6))];
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) return [ip, ipv4(b.slice(4, 8)), ipv4(tail, 0xff)];
  if ((zeros(0, 12) && !zeros(12, 15)) || (nat64 && b[4] === 0 && b[5] === 1)) return [ip, ipv4(tail)];
  return [ip];
}
