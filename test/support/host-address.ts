import { networkInterfaces } from 'node:os';

/**
 * This machine's own addresses that are neither loopback nor link-local (eth0's), read as the
 * outbound policy reads them. Tests only name them to the policy, which must refuse them before
 * connecting: no test sends traffic to them. None at all is a failure, not a skip: the host-address
 * attack tests would prove nothing.
 */
export function ownAddresses(): string[] {
  const addresses = Object.values(networkInterfaces())
    .flatMap((infos) => infos ?? [])
    .filter((info) => !info.internal && !/^(fe[89ab][0-9a-f]:|169\.254\.)/i.test(info.address))
    .map((info) => info.address);
  if (addresses.length === 0) throw new Error('this machine has no non-loopback, non-link-local address to test with');
  return addresses;
}

/** The first of them as a URL host (an IPv6 address in brackets), IPv4 first. */
export function ownUrlHost(): string {
  const all = ownAddresses();
  const address = all.find((a) => !a.includes(':')) ?? all[0] ?? '';
  return address.includes(':') ? `[${address}]` : address;
}
