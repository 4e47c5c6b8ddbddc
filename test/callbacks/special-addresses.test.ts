import type { NetworkInterfaceInfo } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostAddresses } from '../../src/net/host-addresses.js';
import { Outbound, OutboundRefusedError, type Resolver } from '../../src/net/outbound.js';
import { ownAddresses } from '../support/host-address.js';

/**
 * The outbound policy's decision, as an attacker naming addresses: nothing here connects
 * (checkUrl and refusal decide; connect() is only called where the policy refuses first).
 */
const decide = (outbound: Outbound, url: string) => outbound.checkUrl(url).then(() => 'allowed', String);

/** A host with no interfaces of its own, so only the ranges decide. */
const noInterfaces = new HostAddresses(() => ({}));
const strict = new Outbound({ hostAddresses: noInterfaces });

/** One address inside each special-purpose range that is not globally reachable, and the range named. */
const specialPurpose: Array<[string, string]> = [
  ['192.0.0.8', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.2.1', '192.0.2.0/24'],
  ['192.88.99.1', '192.88.99.0/24'],
  ['198.18.0.1', '198.18.0.0/15'],
  ['198.19.255.254', '198.18.0.0/15'],
  ['198.51.100.7', '198.51.100.0/24'],
  ['203.0.113.9', '203.0.113.0/24'],
  ['[64:ff9b:1::808:808]', '64:ff9b:1::/48'],
  ['[100::1]', '100::/64'],
  ['[2001:0:4136:e378:8000:63bf:a247:28f1]', '2001::/32'], // Teredo: server 65.54.227.120, client 93.184.215.14
  ['[2001:2::1]', '2001:2::/48'],
  ['[2001:10::1]', '2001::/23'],
  ['[2001:1::4]', '2001::/23'],
  ['[2001:db8::1]', '2001:db8::/32'],
  ['[3fff::1]', '3fff::/20'],
  ['[5f00::1]', '5f00::/16'],
  ['[fec0::1]', 'fec0::/10'],
  ['[::2]', '::/3'],
  ['[1000::1]', '::/3'],
  ['[4000::1]', '4000::/2'],
  ['[e000::1]', '8000::/1'],
];

/** Never reachable, whatever the allowlist: the range named. */
const never: Array<[string, string]> = [
  ['0.0.0.0', '0.0.0.0/8'],
  ['0.1.2.3', '0.0.0.0/8'],
  ['169.254.169.254', '169.254.0.0/16'],
  ['100.100.100.200', '100.100.100.200/32'],
  ['224.0.0.1', '224.0.0.0/4'],
  ['239.255.255.250', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32'],
  ['[::]', '::/128'],
  ['[fe80::1]', 'fe80::/10'],
  ['[fd00:ec2::254]', 'fd00:ec2::254/128'],
  ['[ff02::1]', 'ff00::/8'],
];

describe('special-purpose addresses (IANA IPv4 and IPv6 Special-Purpose Address Registries)', () => {
  it.each(specialPurpose)('refuses %s (in %s) unless the operator allows it', async (host, cidr) => {
    await expect(strict.checkUrl(`http://${host}/`)).rejects.toMatchObject({
      name: 'OutboundRefusedError',
      reason: 'reserved',
      message: expect.stringContaining(`not globally reachable (`),
    });
    expect(await decide(strict, `http://${host}/`)).toContain(cidr);
    const allowing = new Outbound({ allowCidrs: cidr, hostAddresses: noInterfaces });
    expect(await decide(allowing, `http://${host}/`)).toBe('allowed');
  });

  it.each(never)('refuses %s (in %s) even when the operator allows everything', async (host, cidr) => {
    const open = new Outbound({ allowCidrs: '0.0.0.0/0,::/0', hostAddresses: noInterfaces });
    for (const outbound of [strict, open]) {
      await expect(outbound.checkUrl(`http://${host}/`)).rejects.toMatchObject({ reason: 'reserved' });
      expect(await decide(outbound, `http://${host}/`)).toContain(cidr);
    }
  });

  it('keeps the globally reachable sub-blocks of 192.0.0.0/24 and 2001::/23, and public addresses in every form', async () => {
    for (const host of [
      '192.0.0.9', // PCP anycast
      '192.0.0.10', // TURN anycast
      '[2001:1::1]',
      '[2001:1::2]',
      '[2001:1::3]',
      '[2001:3::1]', // AMT
      '[2001:4:112::1]', // AS112
      '[2001:20::1]', // ORCHIDv2
      '[2001:30::1]', // DETs
      '93.184.215.14',
      '[2606:4700:4700::1111]',
      '[::ffff:93.184.215.14]', // mapped public IPv4
      '[64:ff9b::5db8:d70e]', // NAT64 of a public IPv4
      '[2002:5db8:d70e::1]', // 6to4 of a public IPv4
    ])
      expect(await decide(strict, `http://${host}/`), host).toBe('allowed');
  });

  it('checks mapped, translated, 6to4, Teredo and IPv4-compatible forms as the IPv4 address they carry', async () => {
    for (const [host, carried] of <Array<[string, string]>>[
      ['[::ffff:c000:201]', '192.0.2.1'],
      ['[::ffff:198.18.0.1]', '198.18.0.1'],
      ['[0:0:0:0:0:ffff:192.0.0.8]', '192.0.0.8'],
      ['[64:ff9b::c633:6407]', '198.51.100.7'],
      ['[64:ff9b::203.0.113.9]', '203.0.113.9'],
      ['[2002:c000:0201::1]', '192.0.2.1'],
      ['[2002:c612:1::]', '198.18.0.1'],
    ]) {
      expect(await decide(strict, `http://${host}/`), host).toMatch(
        new RegExp(`carries ${carried.replace(/\./g, '\\.')}`),
      );
    }
    // Allowed ranges or not, the metadata address is never reached through local-use NAT64, Teredo (server and client) or IPv4-compatible forms.
    const open = new Outbound({ allowCidrs: '0.0.0.0/0,::/0', hostAddresses: noInterfaces });
    for (const host of [
      '[64:ff9b:1::a9fe:a9fe]',
      '[::a9fe:a9fe]',
      '[2001:0:a9fe:a9fe::1]', // Teredo server
      '[2001:0:4136:e378:8000:63bf:5601:5601]', // Teredo client 169.254.169.254, obfuscated
      '[::ffff:a9fe:a9fe]',
    ]) {
      expect(await decide(open, `http://${host}/`), host).toMatch(/carries 169\.254\.169\.254/);
    }
  });

  it('reads odd spellings as the address a socket would reach: numeric IPv4 forms, IPv6 spellings, zone ids', async () => {
    for (const [url, address] of <Array<[string, string]>>[
      ['http://3221225985/', '192.0.2.1'], // decimal
      ['http://0xc0000201/', '192.0.2.1'], // hex
      ['http://0300.0.02.01/', '192.0.2.1'], // octal
      ['http://0xc0.0.2.1/', '192.0.2.1'],
      ['http://192.0.513/', '192.0.2.1'], // three parts
      ['http://3323068417/', '198.18.0.1'],
      ['http://2130706433/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://[2001:DB8:0:0:0:0:0:1]/', '2001:db8::1'],
      ['http://[2001:0db8::0001]/', '2001:db8::1'],
    ])
      expect(await decide(strict, url), url).toMatch(
        new RegExp(`^OutboundRefusedError: ${address.replace(/\./g, '\\.')} `),
      );

    // connect() (Python egress) takes the host as the caller spelled it: the same reading, zone ids dropped.
    for (const host of [
      '0xc0.0.2.1',
      '3221225985',
      '0300.0.02.01',
      '2001:db8::1%eth0',
      '[2001:db8::1%eth0]',
      'fe80::1%eth0',
    ])
      await expect(strict.connect(host, 80, 1000), host).rejects.toBeInstanceOf(OutboundRefusedError);
    // A resolver is never asked about a literal, however it is spelled.
    const resolve = vi.fn<Resolver>(async () => [{ address: '93.184.215.14', family: 4 }]);
    await expect(new Outbound({ resolve, hostAddresses: noInterfaces }).checkHost('0x7f.1', 80)).rejects.toMatchObject({
      message: '127.0.0.1 is a private or loopback address',
    });
    expect(resolve).not.toHaveBeenCalled();
  });

  it('refuses a name resolving to a special-purpose address, whatever else it resolves to', async () => {
    const resolve: Resolver = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '198.18.0.1', family: 4 },
    ];
    await expect(
      new Outbound({ resolve, hostAddresses: noInterfaces }).checkUrl('http://bench.example/'),
    ).rejects.toMatchObject({
      reason: 'reserved',
      message:
        'bench.example resolves to 198.18.0.1 is a special-purpose address, not globally reachable (benchmarking 198.18.0.0/15)',
    });
  });
});

describe("the machine's own addresses", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses every address of this machine (eth0 and the rest, read from os.networkInterfaces) with the policy error', async () => {
    const outbound = new Outbound();
    for (const address of ownAddresses()) {
      const host = address.includes(':') ? `[${address}]` : address;
      await expect(outbound.checkUrl(`http://${host}:8080/`), address).rejects.toMatchObject({
        name: 'OutboundRefusedError',
        message: expect.stringMatching(/^\S+ is an address of this host \(\S+\)$/),
      });
      // A name that resolves to it, and the mapped spelling, are refused alike.
      const resolve: Resolver = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      await expect(new Outbound({ resolve }).checkUrl('http://mine.example/')).rejects.toThrow(
        /an address of this host/,
      );
      if (!address.includes(':'))
        await expect(outbound.checkUrl(`http://[::ffff:${address}]/`)).rejects.toThrow(/an address of this host/);
    }
  });

  it('refuses a public address of an interface, in every spelling, unless the operator allows exactly it', async () => {
    const eth0: NetworkInterfaceInfo[] = [
      {
        address: '93.184.215.14',
        netmask: '255.255.255.0',
        family: 'IPv4',
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: '93.184.215.14/24',
      },
      {
        address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
        netmask: 'ffff:ffff:ffff:ffff::',
        family: 'IPv6',
        mac: '02:00:00:00:00:01',
        internal: false,
        cidr: null,
        scopeid: 0,
      },
    ];
    const host = new HostAddresses(() => ({ eth0 }));
    const outbound = new Outbound({ hostAddresses: host });
    for (const url of [
      'http://93.184.215.14/',
      'http://1572394766/',
      'http://[::ffff:5db8:d70e]/',
      'http://[64:ff9b::93.184.215.14]/',
      'http://[2002:5db8:d70e::1]/',
      'http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/',
      'http://[2606:2800:021f:cb07:6820:80DA:AF6B:8B2C]/',
    ]) {
      await expect(outbound.checkUrl(url), url).rejects.toMatchObject({
        reason: 'private',
        message: expect.stringContaining('is an address of this host (eth0)'),
      });
    }
    // The neighbour on the same network is not this host.
    expect(await decide(outbound, 'http://93.184.215.15/')).toBe('allowed');
    // The operator's allowlist is the only way in.
    const allowing = new Outbound({ allowCidrs: '93.184.215.14/32', hostAddresses: host });
    expect(await decide(allowing, 'http://93.184.215.14/')).toBe('allowed');
    expect(await decide(allowing, 'http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/')).toContain(
      'address of this host',
    );
  });

  it('sees an address added to or removed from an interface within maxAgeMs of the change', async () => {
    vi.useFakeTimers();
    let eth1: NetworkInterfaceInfo[] = [];
    const read = vi.fn(() => ({ eth1 }));
    const outbound = new Outbound({ hostAddresses: new HostAddresses(read, 1000) });
    expect(await decide(outbound, 'http://93.184.215.20/')).toBe('allowed');
    eth1 = [
      {
        address: '93.184.215.20',
        netmask: '255.255.255.0',
        family: 'IPv4',
        mac: '02:00:00:00:00:02',
        internal: false,
        cidr: '93.184.215.20/24',
      },
    ];
    // Read once a second at most: the same reading serves every decision meanwhile.
    expect(await decide(outbound, 'http://93.184.215.20/')).toBe('allowed');
    expect(read).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(await decide(outbound, 'http://93.184.215.20/')).toContain('is an address of this host (eth1)');
    expect(read).toHaveBeenCalledTimes(2);
    eth1 = [];
    vi.advanceTimersByTime(1000);
    expect(await decide(outbound, 'http://93.184.215.20/')).toBe('allowed');
  });
});
