import type { LookupAddress } from 'node:dns';
import { Agent as HttpAgent, type AgentOptions, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/** The lookup a request is pinned with: answers the checked address, whatever is asked. */
export type PinnedLookup = (
  hostname: string,
  options: { all?: boolean },
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** The address behind each pinned lookup, read by the agents to key their pools. */
const pinnedAddresses = new WeakMap<PinnedLookup, LookupAddress>();

/** A lookup that connects to `address` and never asks DNS again (no rebinding between check and connect). */
export function pinnedLookup(address: LookupAddress): PinnedLookup {
  const lookup: PinnedLookup = (_hostname, options, callback) => {
    if (options.all) callback(null, [address]);
    else callback(null, address.address, address.family);
  };
  pinnedAddresses.set(lookup, address);
  return lookup;
}

/**
 * Node names a pool by host and port only, so a name that now resolves to
 * another address would reuse a socket to the old one. Adding the checked
 * address means a request only ever rides a socket to the address it was
 * checked against; a request without a pinned address is refused.
 */
function poolName(base: string, options: ClientRequestArgs | undefined): string {
  const pinned = options?.lookup && pinnedAddresses.get(options.lookup);
  if (!pinned) throw new Error('outbound keep-alive agents only carry requests pinned to a checked address');
  return `${base}|${pinned.family}/${pinned.address}`;
}

class PinnedHttpAgent extends HttpAgent {
  override getName(options?: ClientRequestArgs): string {
    return poolName(super.getName(options), options);
  }
}

class PinnedHttpsAgent extends HttpsAgent {
  override getName(options?: ClientRequestArgs): string {
    return poolName(super.getName(options), options);
  }
}

export interface KeepAliveOptions {
  /** An unused socket is closed after this long (below common servers' keep-alive timeouts, so rarely stale). */
  idleMs: number;
  /** Sockets open at once per host, port and address; more requests wait for one. */
  maxSocketsPerAddress: number;
  /** Unused sockets kept per host, port and address; more are closed when their request ends. */
  maxIdlePerAddress: number;
}

export interface PinnedAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

/** Keep-alive agents for the outbound policy: pools per checked address, bounded, idle sockets closed promptly. */
export function pinnedAgents(options: KeepAliveOptions): PinnedAgents {
  const agentOptions: AgentOptions = {
    keepAlive: true,
    // The warmest socket first, so the rest go idle and are closed.
    scheduling: 'lifo',
    timeout: options.idleMs,
    maxSockets: options.maxSocketsPerAddress,
    maxFreeSockets: options.maxIdlePerAddress,
  };
  return { http: new PinnedHttpAgent(agentOptions), https: new PinnedHttpsAgent(agentOptions) };
}
