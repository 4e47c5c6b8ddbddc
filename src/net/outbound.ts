import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, connect as netConnect, isIP, type Socket } from 'node:net';
import got, { RequestError, type Got } from 'got';
import { pinnedAgents, pinnedLookup, type KeepAliveOptions } from './pinned-agents.js';

/** Resolves a host name to all its addresses (node's dns.lookup by default; tests inject their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** Why a destination was refused: a bounded set, used as a metrics label. */
export type RefusalReason = 'invalid' | 'unresolvable' | 'private' | 'reserved';

export interface Refusal {
  readonly reason: RefusalReason;
  readonly message: string;
}

export class OutboundRefusedError extends Error {
  constructor(
    message: string,
    readonly reason: RefusalReason = 'invalid',
  ) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

/** Never reachable, whatever the operator allows: link-local, cloud metadata, unspecified, multicast, broadcast. */
const alwaysRefused = new BlockList();
alwaysRefused.addSubnet('169.254.0.0', 16, 'ipv4');
alwaysRefused.addSubnet('0.0.0.0', 8, 'ipv4');
alwaysRefused.addSubnet('224.0.0.0', 4, 'ipv4');
alwaysRefused.addSubnet('240.0.0.0', 4, 'ipv4');
alwaysRefused.addAddress('100.100.100.200', 'ipv4');
alwaysRefused.addSubnet('fe80::', 10, 'ipv6');
alwaysRefused.addSubnet('ff00::', 8, 'ipv6');
alwaysRefused.addAddress('::', 'ipv6');
alwaysRefused.addAddress('fd00:ec2::254', 'ipv6');

/** Refused unless the operator allows them: loopback, RFC 1918, CGNAT, unique-local IPv6. */
const privateRanges = new BlockList();
privateRanges.addSubnet('127.0.0.0', 8, 'ipv4');
privateRanges.addSubnet('10.0.0.0', 8, 'ipv4');
privateRanges.addSubnet('172.16.0.0', 12, 'ipv4');
privateRanges.addSubnet('192.168.0.0', 16, 'ipv4');
privateRanges.addSubnet('100.64.0.0', 10, 'ipv4');
privateRanges.addAddress('::1', 'ipv6');
privateRanges.addSubnet('fc00::', 7, 'ipv6');

/** Parses `a.b.c.d/n, x::/n` into a BlockList; throws with the bad entry named. */
export function parseCidrList(list: string): BlockList {
  const allowed = new BlockList();
  for (const entry of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address = '', bitsText] = entry.split('/');
    const family = isIP(address);
    const bits = bitsText === undefined ? (family === 6 ? 128 : 32) : Number(bitsText);
    if (family === 0 || !Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32))
      throw new Error(`not a CIDR: ${entry}`);
    allowed.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return allowed;
}

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted quad allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.split('%')[0] ?? '';
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const [left, right] = [parse(head), parse(tail ?? '')];
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const dotted = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries and reaches through a
 * translator: IPv4-mapped and -compatible (::ffff:a.b.c.d, ::a.b.c.d), NAT64
 * (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32: server and
 * obfuscated client). Each is checked like a plain IPv4 destination.
 */
function embeddedIpv4(groups: number[]): string[] {
  const g = (i: number) => groups[i] ?? 0;
  const zeroUntil = (n: number) => groups.slice(0, n).every((x) => x === 0);
  if (zeroUntil(5) && (g(5) === 0xffff || (g(5) === 0 && (g(6) !== 0 || g(7) > 1)))) return [dotted(g(6), g(7))];
  if (g(0) === 0x64 && g(1) === 0xff9b && groups.slice(2, 6).every((x) => x === 0)) return [dotted(g(6), g(7))];
  if (g(0) === 0x2002) return [dotted(g(1), g(2))];
  if (g(0) === 0x2001 && g(1) === 0) return [dotted(g(2), g(3)), dotted(g(6) ^ 0xffff, g(7) ^ 0xffff)];
  return [];
}

export interface OutboundOptions {
  /** Private/loopback ranges the operator allows (never widens the always-refused ones). */
  allowCidrs?: string;
  resolve?: Resolver;
  /** Connection reuse (tests shorten the idle time). */
  keepAlive?: KeepAliveOptions;
}

/**
 * Sockets reused while a receiver is busy, closed a second after their last request. No cap on
 * sockets per address: pools are shared by every tenant sending there, and a cap would let one
 * tenant's slow endpoint queue another's requests on the same host (as Node's own agent, none).
 */
const defaultKeepAlive: KeepAliveOptions = { idleMs: 1000, maxSocketsPerAddress: Infinity, maxIdlePerAddress: 16 };

/** Addresses whose verdict is remembered; the oldest is forgotten beyond this. */
const rememberedAddresses = 1000;

/** How a kept-alive socket the peer had already closed fails a request before any answer. */
const staleSocketCodes = new Set(['ECONNRESET', 'EPIPE']);

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Bytes of the answer kept; reading stops there. */
  maxResponseBytes: number;
  /**
   * Send once more, within what is left of timeoutMs, when a kept-alive socket turns out closed
   * before any answer. The peer may have received the request all the same, so only for requests
   * it can recognise again (a signed callback's webhook-id); never for a code exchange or a test call.
   */
  resendOnStaleSocket?: boolean;
}

export interface OutboundResponse {
  status: number;
  body: string;
}

const defaultResolve: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/**
 * The one way to reach a tenant-supplied URL: only http(s); the host is
 * resolved and every address checked; the socket connects to the checked
 * address (no second lookup, so no DNS rebinding) or is a kept-alive one to
 * that same address; no redirects; a timeout and a cap on the answer read.
 */
export class Outbound {
  private readonly allowed: BlockList;
  private readonly resolve: Resolver;
  private readonly refusals = new Map<string, Refusal | null>();
  /** got with this policy's fixed options merged once, not at every request. */
  private readonly client: Got;

  constructor(options: OutboundOptions = {}) {
    this.allowed = parseCidrList(options.allowCidrs ?? '');
    this.resolve = options.resolve ?? defaultResolve;
    this.client = got.extend({
      agent: pinnedAgents(options.keepAlive ?? defaultKeepAlive),
      retry: { limit: 0 },
      followRedirect: false,
      throwHttpErrors: false,
    });
  }

  /**
   * Why the address is refused, or null when it may be reached. The answer
   * depends on the address and this policy alone, which never changes, so it
   * is remembered: a BlockList check costs a SocketAddress each time.
   */
  refusal(ip: string): Refusal | null {
    const known = this.refusals.get(ip);
    if (known !== undefined) return known;
    const found = this.findRefusal(ip);
    if (this.refusals.size >= rememberedAddresses) this.refusals.delete(this.refusals.keys().next().value as string);
    this.refusals.set(ip, found);
    return found;
  }

  private findRefusal(ip: string): Refusal | null {
    const groups = ipv6Groups(ip.toLowerCase());
    const carried = groups ? embeddedIpv4(groups) : [];
    for (const [address, family] of [
      [ip.toLowerCase(), groups ? 'ipv6' : 'ipv4'] as const,
      ...carried.map((a) => [a, 'ipv4'] as const),
    ]) {
      const via = address === ip.toLowerCase() ? '' : ` (it carries ${address})`;
      if (alwaysRefused.check(address, family))
        return {
          reason: 'reserved',
          message: `${ip} is a link-local, metadata, unspecified or multicast address${via}`,
        };
      if (privateRanges.check(address, family) && !this.allowed.check(address, family))
        return { reason: 'private', message: `${ip} is a private or loopback address${via}` };
    }
    return null;
  }

  /** Resolves the host (an IP literal as is) and checks every address; the one to connect to. Throws OutboundRefusedError. */
  async checkHost(host: string): Promise<LookupAddress> {
    let addresses: LookupAddress[];
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw new OutboundRefusedError(`host ${host} does not resolve`, 'unresolvable');
      }
    }
    if (addresses.length === 0) throw new OutboundRefusedError(`host ${host} does not resolve`, 'unresolvable');
    for (const a of addresses) {
      const why = this.refusal(a.address);
      if (why)
        throw new OutboundRefusedError(isIP(host) ? why.message : `${host} resolves to ${why.message}`, why.reason);
    }
    return addresses[0] as LookupAddress;
  }

  /**
   * A TCP connection to host:port for a tunnel (Python egress): the same
   * resolve-and-check as URLs, then a socket to the checked address. Throws
   * OutboundRefusedError, or the socket's error (refused, unreachable, timeout).
   */
  async connect(host: string, port: number, timeoutMs: number): Promise<{ socket: Socket; address: string }> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new OutboundRefusedError(`not a TCP port: ${port}`);
    const checked = await this.checkHost(host.replace(/^\[|\]$/g, ''));
    const socket = netConnect({ host: checked.address, port, family: checked.family });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connecting to ${host}:${port} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      const onError = (err: Error): void => {
        clearTimeout(timer);
        reject(err);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        // A later error only ends the socket; its owner sees 'close'.
        socket.on('error', () => socket.destroy());
        resolve();
      });
    });
    return { socket, address: checked.address };
  }

  /** Validates the URL and resolves its host; the checked address to connect to. Throws OutboundRefusedError. */
  async checkUrl(url: string): Promise<{ url: URL; address: LookupAddress }> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new OutboundRefusedError('not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new OutboundRefusedError('only http and https URLs are allowed');
    if (parsed.username || parsed.password) throw new OutboundRefusedError('credentials in the URL are not allowed');
    return { url: parsed, address: await this.checkHost(parsed.hostname.replace(/^\[|\]$/g, '')) };
  }

  /** One request; a 3xx is returned as is. Throws OutboundRefusedError before connecting, or got's RequestError. */
  async request(url: string, options: OutboundRequest): Promise<OutboundResponse> {
    const checked = await this.checkUrl(url);
    const started = Date.now();
    try {
      return await this.send(checked.url, checked.address, options);
    } catch (err) {
      // A kept-alive socket the peer closed as it was taken, before any answer: once more on a new one, if allowed.
      const stale = err instanceof RequestError && err.request?.reusedSocket && staleSocketCodes.has(err.code);
      const left = options.timeoutMs - (Date.now() - started);
      if (!stale || !options.resendOnStaleSocket || left <= 0) throw err;
      return this.send(checked.url, checked.address, { ...options, timeoutMs: left });
    }
  }

  private async send(url: URL, pinned: LookupAddress, options: OutboundRequest): Promise<OutboundResponse> {
    let status = 0;
    const stream = this.client.stream(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      body: options.body,
      timeout: { request: options.timeoutMs },
      // Connect to the address that was checked, never to a fresh lookup's answer; the agents pool by it.
      dnsLookup: pinnedLookup(pinned),
    });
    stream.on('response', (response: { statusCode: number }) => {
      status = response.statusCode;
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    try {
      for await (const chunk of stream) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
        chunks.push(buffer.subarray(0, options.maxResponseBytes - kept));
        kept += Math.min(buffer.length, options.maxResponseBytes - kept);
        // Enough kept: leaving the loop destroys the stream, so an endless answer costs nothing.
        if (kept >= options.maxResponseBytes) break;
      }
    } catch (err) {
      // A body cut short after the status arrived still counts as that status.
      if (status === 0) throw err;
    }
    return { status, body: Buffer.concat(chunks).toString('utf8') };
  }
}

export { RequestError };
