import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { connect as netConnect, type Socket } from 'node:net';
import { CidrList, alwaysRefused, privateRanges, specialPurposeRanges } from './address-ranges.js';
import { TargetList } from './allowed-targets.js';
import { HostAddresses } from './host-addresses.js';
import { exchange, OutboundRequestError, type OutboundResponse } from './http-exchange.js';
import { canonicalIp, checkedAs, type IpAddress } from './ip-address.js';
import { pinnedAgents, pinnedLookup, type KeepAliveOptions, type PinnedAgents } from './pinned-agents.js';
import type { Tracing } from '../tracing/tracing.js';

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

export interface OutboundOptions {
  /** Private, special-purpose and host addresses the operator allows (never widens the always-refused ones). */
  allowCidrs?: string;
  /** `host:port` destinations the operator names one by one, reachable although private or this host's own. */
  allowTargets?: string;
  resolve?: Resolver;
  /** This machine's own addresses (tests pass a reader of their own). */
  hostAddresses?: HostAddresses;
  /** Connection reuse (tests shorten the idle time). */
  keepAlive?: KeepAliveOptions;
  /** Adds the active trace context to a request's headers when tracing is on (src/tracing); none by default. */
  withTraceContext?: Tracing['withTraceContext'];
}

/**
 * Sockets reused while a receiver is busy, closed a second after their last request. No cap on
 * sockets per address: pools are shared by every tenant sending there, and a cap would let one
 * tenant's slow endpoint queue another's requests on the same host (as Node's own agent, none).
 */
const defaultKeepAlive: KeepAliveOptions = { idleMs: 1000, maxSocketsPerAddress: Infinity, maxIdlePerAddress: 16 };

/**
 * What is known of an address without looking at the host's interfaces: refused whatever the
 * allowlist says (or not an address at all), or the addresses it is checked as (ip-address.ts:
 * itself, or the IPv4 ones it stands for or carries) and whether a private or special-purpose
 * range the allowlist does not cover refuses it.
 */
type Verdict =
  | { readonly fixed: Refusal }
  | {
      readonly fixed: null;
      readonly self: IpAddress;
      readonly checkedAs: readonly IpAddress[];
      readonly ranges: Refusal | null;
    };

/** How a refusal names an IPv4 address an IPv6 one stood for or carried. */
const carrying = (self: IpAddress, candidate: IpAddress): string =>
  candidate.family === self.family ? '' : ` (it carries ${candidate.address})`;

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
  private readonly allowed: CidrList;
  private readonly targets: TargetList;
  private readonly resolve: Resolver;
  private readonly hostAddresses: HostAddresses;
  private readonly withTraceContext: Tracing['withTraceContext'];
  private readonly verdicts = new Map<string, Verdict>();
  private readonly agents: PinnedAgents;

  constructor(options: OutboundOptions = {}) {
    this.allowed = new CidrList(options.allowCidrs ?? '');
    this.targets = new TargetList(options.allowTargets ?? '');
    this.resolve = options.resolve ?? defaultResolve;
    this.hostAddresses = options.hostAddresses ?? new HostAddresses();
    this.withTraceContext = options.withTraceContext ?? ((headers) => headers);
    this.agents = pinnedAgents(options.keepAlive ?? defaultKeepAlive);
  }

  /**
   * Why the address is refused, or null when it may be reached. In order: a range never
   * reachable; with a port, an address and port the operator named (allowed); an address of
   * this host; a private or special-purpose range the operator has not allowed. The host's
   * addresses change, so they are looked up at each decision; the rest depends on the address
   * and this policy alone and is remembered (BlockList checks cost a SocketAddress each).
   */
  refusal(ip: string, port?: number): Refusal | null {
    const verdict = this.verdict(ip);
    if (verdict.fixed) return verdict.fixed;
    if (port !== undefined && this.targets.has(verdict.self.address, port)) return null;
    for (const candidate of verdict.checkedAs) {
      const owner = this.hostAddresses.interfaceOf(candidate);
      if (owner && !this.allowed.has(candidate))
        return {
          reason: 'private',
          message: `${ip} is an address of this host (${owner})${carrying(verdict.self, candidate)}`,
        };
    }
    return verdict.ranges;
  }

  private verdict(ip: string): Verdict {
    const known = this.verdicts.get(ip);
    if (known) return known;
    const found = this.findVerdict(ip);
    if (this.verdicts.size >= rememberedAddresses) this.verdicts.delete(this.verdicts.keys().next().value as string);
    this.verdicts.set(ip, found);
    return found;
  }

  private findVerdict(ip: string): Verdict {
    const canonical = canonicalIp(ip);
    if (!canonical) return { fixed: { reason: 'invalid', message: `${ip} is not an IP address` } };
    const candidates = checkedAs(canonical);
    let ranges: Refusal | null = null;
    for (const candidate of candidates) {
      const via = carrying(canonical, candidate);
      const never = alwaysRefused.find(candidate);
      if (never) {
        const message = `${ip} is a link-local, metadata, unspecified or multicast address (${never.name} ${never.cidr})${via}`;
        return { fixed: { reason: 'reserved', message } };
      }
      if (ranges || this.allowed.has(candidate)) continue;
      if (privateRanges.find(candidate))
        ranges = { reason: 'private', message: `${ip} is a private or loopback address${via}` };
      const special = specialPurposeRanges.find(candidate);
      if (!ranges && special)
        ranges = {
          reason: 'reserved',
          message: `${ip} is a special-purpose address, not globally reachable (${special.name} ${special.cidr})${via}`,
        };
    }
    return { fixed: null, self: canonical, checkedAs: candidates, ranges };
  }

  /**
   * Resolves the host (an IP literal as is, in any spelling) and checks every address with the port; the one to
   * connect to. Throws OutboundRefusedError.
   */
  async checkHost(host: string, port: number): Promise<LookupAddress> {
    const literal = canonicalIp(host);
    let addresses: LookupAddress[];
    if (literal) addresses = [{ address: literal.address, family: literal.family === 'ipv6' ? 6 : 4 }];
    else {
      try {
        addresses = await this.resolve(host);
      } catch {
        throw new OutboundRefusedError(`host ${host} does not resolve`, 'unresolvable');
      }
    }
    if (addresses.length === 0) throw new OutboundRefusedError(`host ${host} does not resolve`, 'unresolvable');
    // A host name the operator named with this port: whatever it resolves to passes but the never-reachable ranges.
    const named = !literal && this.targets.has(host, port);
    for (const a of addresses) {
      const why = named ? this.verdict(a.address).fixed : this.refusal(a.address, port);
      if (why) throw new OutboundRefusedError(literal ? why.message : `${host} resolves to ${why.message}`, why.reason);
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
    const checked = await this.checkHost(host.replace(/^\[|\]$/g, ''), port);
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
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
    return { url: parsed, address: await this.checkHost(parsed.hostname.replace(/^\[|\]$/g, ''), port) };
  }

  /**
   * One request (never a redirect followed: a 3xx is returned as is). Throws OutboundRefusedError before connecting,
   * or OutboundRequestError when no answer came.
   */
  async request(url: string, options: OutboundRequest): Promise<OutboundResponse> {
    const checked = await this.checkUrl(url);
    const started = Date.now();
    try {
      return await this.send(checked.url, checked.address, options);
    } catch (err) {
      // A kept-alive socket the peer closed as it was taken, before any answer: once more on a new one, if allowed.
      const stale = err instanceof OutboundRequestError && err.reusedSocket && staleSocketCodes.has(err.code ?? '');
      const left = options.timeoutMs - (Date.now() - started);
      if (!stale || !options.resendOnStaleSocket || left <= 0) throw err;
      return this.send(checked.url, checked.address, { ...options, timeoutMs: left });
    }
  }

  private send(url: URL, pinned: LookupAddress, options: OutboundRequest): Promise<OutboundResponse> {
    return exchange({
      url,
      method: options.method ?? 'GET',
      // The receiver continues the caller's trace (callbacks, deliveries, token and test calls) when tracing is on.
      headers: this.withTraceContext(options.headers),
      body: options.body,
      timeoutMs: options.timeoutMs,
      maxResponseBytes: options.maxResponseBytes,
      agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
      // Connect to the address that was checked, never to a fresh lookup's answer; the agents pool by it.
      lookup: pinnedLookup(pinned),
    });
  }
}

export { OutboundRequestError };
