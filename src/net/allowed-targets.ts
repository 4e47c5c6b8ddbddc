import { canonicalIp } from './ip-address.js';

/** `host:port`, the host a name or an IP literal (IPv6 in brackets). */
const entryPattern = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/;
const hostName = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * Destinations the operator names one by one (`CASEFLOW_OUTBOUND_ALLOW_TARGETS`, e.g. a local echo service at
 * `127.0.0.1:8787`): tenant-supplied URLs and tunnels may reach exactly these although the address is private,
 * loopback or this host's own. A port, never a range: naming one service opens nothing else on that host.
 */
export class TargetList {
  private readonly targets = new Set<string>();

  /** Throws on an entry that is not `host:port`. */
  constructor(list: string) {
    for (const entry of list
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const match = entryPattern.exec(entry);
      const port = Number(match?.[2]);
      const host = match?.[1] ? TargetList.host(match[1]) : undefined;
      if (!host || port < 1 || port > 65535) throw new Error(`not a host:port: ${entry}`);
      this.targets.add(`${host} ${port}`);
    }
  }

  /** An IP literal in its canonical spelling (any spelling names the same address), a name in lower case. */
  private static host(text: string): string | undefined {
    const ip = canonicalIp(text);
    if (ip) return ip.address;
    const name = text.toLowerCase();
    return hostName.test(name) ? name : undefined;
  }

  /** Whether `host` (a name as the URL wrote it, or an address) with `port` is named. */
  has(host: string, port: number): boolean {
    const key = TargetList.host(host);
    return key !== undefined && this.targets.has(`${key} ${port}`);
  }
}
