import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { canonicalIp, type IpAddress } from './ip-address.js';

/** Reads the machine's interfaces (os.networkInterfaces; tests pass their own). */
export type InterfaceReader = () => NodeJS.Dict<NetworkInterfaceInfo[]>;

/** How long one reading of the interfaces is used, in ms. */
const defaultMaxAgeMs = 1000;

const isLoopback = (ip: IpAddress): boolean =>
  ip.family === 'ipv4' ? ip.address.startsWith('127.') : ip.address === '::1';

/**
 * The addresses of this machine's own interfaces (eth0's included, whatever range it is in): a
 * service listening on all interfaces must not be reachable by naming one of them. Read at
 * construction, then again at a decision when the last reading is older than maxAgeMs. A reading
 * costs a getifaddrs (~40 µs measured on a busy 2-core machine), too much for every callback
 * under load; reading at decision time needs no timer to own and stop, and an idle service reads
 * nothing; an address added to an interface is refused from at most a second later. Loopback
 * addresses are left to the loopback rule (same allowlist, clearer message).
 */
export class HostAddresses {
  private owners = new Map<string, string>();
  private readAt = 0;

  constructor(
    private readonly read: InterfaceReader = networkInterfaces,
    private readonly maxAgeMs = defaultMaxAgeMs,
  ) {
    this.refresh();
  }

  /** The interface that has this (canonical) address, or null. */
  interfaceOf(ip: IpAddress): string | null {
    if (Date.now() - this.readAt >= this.maxAgeMs) this.refresh();
    return this.owners.get(ip.address) ?? null;
  }

  private refresh(): void {
    const owners = new Map<string, string>();
    for (const [name, infos] of Object.entries(this.read())) {
      for (const info of infos ?? []) {
        const ip = canonicalIp(info.address);
        if (ip && !isLoopback(ip)) owners.set(ip.address, name);
      }
    }
    this.owners = owners;
    this.readAt = Date.now();
  }
}
