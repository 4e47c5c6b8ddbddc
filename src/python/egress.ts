import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { Outbound, OutboundRefusedError, type Resolver } from '../net/outbound.js';

/** Limits on one Python call's network use. */
export interface EgressLimits {
  /** The child's request line, and the TCP connect of one tunnel (default 10 000 ms). */
  connectTimeoutMs: number;
  /** A tunnel with no bytes either way for this long is closed (default 30 000 ms). */
  idleTimeoutMs: number;
  /** Tunnels open at once per call (default 8). */
  maxTunnelsPerCall: number;
  /** Bytes through all tunnels of a call, both directions (default 50 MB); past it every tunnel is cut. */
  maxBytesPerCall: number;
}

export interface EgressOptions extends Partial<EgressLimits> {
  /** Private/loopback CIDRs Python may reach (CASEFLOW_OUTBOUND_ALLOW_CIDRS); metadata and link-local never. */
  allowCidrs?: string;
  /** host:port destinations Python may reach although private (CASEFLOW_OUTBOUND_ALLOW_TARGETS). */
  allowTargets?: string;
  /** Tests only: a resolver returning chosen addresses. */
  resolve?: Resolver;
}

/** Why a tunnel was refused or cut: bounded, a metrics label. */
type EgressReason =
  | 'ok'
  | 'invalid'
  | 'unresolvable'
  | 'private'
  | 'reserved'
  | 'bad-request'
  | 'unknown-call'
  | 'tunnel-limit'
  | 'byte-limit'
  | 'connect-failed';

export interface EgressStats {
  allowed: number;
  refused: Partial<Record<EgressReason, number>>;
  /** Tunnels closed by the byte cap. */
  cut: number;
}

interface CallEgress {
  org: string;
  tunnels: Set<Socket>;
  bytes: number;
  ended: boolean;
  /** The byte cap was hit (counted once). */
  cut: boolean;
}

class Refusal extends Error {
  constructor(
    readonly reason: EgressReason,
    message: string,
  ) {
    super(message);
  }
}

const MAX_REQUEST_LINE = 1024;
const SOCKET_NAME = 'egress.sock';

const defaults: EgressLimits = {
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  maxTunnelsPerCall: 8,
  maxBytesPerCall: 50 << 20,
};

/**
 * The only way out for network-enabled Python: its servers have no network
 * namespace of their own beyond an empty one, and reach this unix socket,
 * bound into the sandbox. A child asks `{"token","host","port"}` on one line;
 * the token names the call (handed to that call's child only), the host is
 * resolved and checked by the outbound policy, the socket connects to the
 * checked address, the answer is one line `{"ok":true}` or
 * `{"ok":false,"error"}`, then bytes are spliced. TLS stays end to end in Python.
 */
export class EgressProxy {
  private readonly calls = new Map<string, CallEgress>();
  /** Every accepted connection, whatever its phase, so close() can end them all. */
  private readonly clients = new Set<Socket>();
  private readonly counts: EgressStats = { allowed: 0, refused: {}, cut: 0 };
  private readonly counter: Counter<'outcome' | 'reason'> | null;

  private constructor(
    readonly dir: string,
    private readonly server: Server,
    private readonly outbound: Outbound,
    private readonly limits: EgressLimits,
    private readonly logger: Logger,
    registry: Registry | undefined,
  ) {
    this.counter = registry
      ? new Counter({
          name: 'caseflow_python_egress_total',
          help: 'Python network connections through the egress proxy, by outcome (allowed, refused, cut) and reason',
          labelNames: ['outcome', 'reason'] as const,
          registers: [registry],
        })
      : null;
  }

  static async start(options: EgressOptions, logger: Logger, registry?: Registry): Promise<EgressProxy> {
    const dir = await mkdtemp(join(tmpdir(), 'caseflow-egress-'));
    // The servers run as an unprivileged uid; the token, not the file mode, is what admits a call.
    await chmod(dir, 0o711);
    const server = createServer();
    const path = join(dir, SOCKET_NAME);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, resolve);
    });
    await chmod(path, 0o666);
    const limits: EgressLimits = {
      connectTimeoutMs: options.connectTimeoutMs ?? defaults.connectTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs ?? defaults.idleTimeoutMs,
      maxTunnelsPerCall: options.maxTunnelsPerCall ?? defaults.maxTunnelsPerCall,
      maxBytesPerCall: options.maxBytesPerCall ?? defaults.maxBytesPerCall,
    };
    const outbound = new Outbound({
      allowCidrs: options.allowCidrs,
      allowTargets: options.allowTargets,
      resolve: options.resolve,
    });
    const proxy = new EgressProxy(dir, server, outbound, limits, logger, registry);
    server.on('connection', (socket) => proxy.accept(socket));
    return proxy;
  }

  static socketIn(dir: string): string {
    return join(dir, SOCKET_NAME);
  }

  /** Registers a call; its token goes to that call's child only. */
  openCall(org: string): string {
    const token = randomBytes(16).toString('hex');
    this.calls.set(token, { org, tunnels: new Set(), bytes: 0, ended: false, cut: false });
    return token;
  }

  /** The call is over: its token stops working and its tunnels close. */
  closeCall(token: string): void {
    const call = this.calls.get(token);
    if (!call) return;
    call.ended = true;
    this.calls.delete(token);
    for (const t of call.tunnels) t.destroy();
  }

  stats(): EgressStats {
    return { allowed: this.counts.allowed, refused: { ...this.counts.refused }, cut: this.counts.cut };
  }

  async close(): Promise<void> {
    for (const token of [...this.calls.keys()]) this.closeCall(token);
    for (const client of this.clients) client.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private count(outcome: 'allowed' | 'refused' | 'cut', reason: EgressReason): void {
    if (outcome === 'allowed') this.counts.allowed += 1;
    else if (outcome === 'cut') this.counts.cut += 1;
    else this.counts.refused[reason] = (this.counts.refused[reason] ?? 0) + 1;
    this.counter?.inc({ outcome, reason });
  }

  private accept(client: Socket): void {
    this.clients.add(client);
    client.on('close', () => this.clients.delete(client));
    client.on('error', () => client.destroy());
    const lineTimer = setTimeout(() => client.destroy(), this.limits.connectTimeoutMs);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf(10);
      if (end < 0 && buffered.length <= MAX_REQUEST_LINE) return;
      client.off('data', onData);
      client.pause();
      clearTimeout(lineTimer);
      const line = end < 0 ? null : buffered.subarray(0, end).toString('utf8');
      void this.open(client, line, buffered.subarray(end + 1));
    };
    client.on('data', onData);
  }

  private async open(client: Socket, line: string | null, early: Buffer): Promise<void> {
    let request: { token: string; host: string; port: number } | null = null;
    let call: CallEgress | undefined;
    try {
      request = parseRequest(line);
      call = this.calls.get(request.token);
      if (!call) throw new Refusal('unknown-call', 'this call has ended or has no network access');
      if (call.tunnels.size >= this.limits.maxTunnelsPerCall) {
        throw new Refusal('tunnel-limit', `at most ${this.limits.maxTunnelsPerCall} connections may be open at once`);
      }
      if (call.bytes >= this.limits.maxBytesPerCall) {
        throw new Refusal(
          'byte-limit',
          `this call has used its ${this.limits.maxBytesPerCall} bytes of network traffic`,
        );
      }
      // Held before the await so concurrent connects count against the limit.
      call.tunnels.add(client);
      const { socket, address } = await this.connectChecked(request.host, request.port);
      if (call.ended || client.destroyed) {
        call.tunnels.delete(client);
        socket.destroy();
        client.destroy();
        return;
      }
      this.count('allowed', 'ok');
      socket.setNoDelay(true);
      client.write('{"ok":true}\n');
      if (early.length > 0) this.carry(call, client, socket, early);
      this.splice(call, client, socket, { host: request.host, port: request.port, address });
    } catch (err) {
      if (call) call.tunnels.delete(client);
      const refusal = err instanceof Refusal ? err : new Refusal('connect-failed', String(err));
      this.count('refused', refusal.reason);
      // Attempts that name no running call are counted only: logging each would let a loop flood the log.
      this.logger[call ? 'info' : 'debug'](
        { org: call?.org, host: request?.host, port: request?.port, reason: refusal.reason, error: refusal.message },
        'python egress refused',
      );
      client.end(`${JSON.stringify({ ok: false, reason: refusal.reason, error: refusal.message })}\n`);
    }
  }

  private async connectChecked(host: string, port: number): Promise<{ socket: Socket; address: string }> {
    try {
      return await this.outbound.connect(host, port, this.limits.connectTimeoutMs);
    } catch (err) {
      if (err instanceof OutboundRefusedError)
        throw new Refusal(err.reason, `${host}:${port} refused by the caseflow outbound policy: ${err.message}`);
      const code = (err as { code?: string }).code;
      throw new Refusal(
        'connect-failed',
        `cannot connect to ${host}:${port}${code ? ` (${code})` : `: ${(err as Error).message}`}`,
      );
    }
  }

  /** Copies bytes both ways with the call's byte cap and one idle timer for the tunnel. */
  private splice(
    call: CallEgress,
    client: Socket,
    remote: Socket,
    target: { host: string; port: number; address: string },
  ): void {
    const moved = { up: 0, down: 0 };
    const idle = setTimeout(() => client.destroy(), this.limits.idleTimeoutMs);
    const forward =
      (from: Socket, to: Socket, direction: 'up' | 'down') =>
      (chunk: Buffer): void => {
        idle.refresh();
        moved[direction] += chunk.length;
        this.carry(call, from, to, chunk);
      };
    client.on('data', forward(client, remote, 'up'));
    remote.on('data', forward(remote, client, 'down'));
    // Back-pressure: a slow reader pauses the other side until it drains.
    client.on('drain', () => remote.resume());
    remote.on('drain', () => client.resume());
    client.on('end', () => remote.end());
    remote.on('end', () => client.end());
    const close = (): void => {
      clearTimeout(idle);
      client.destroy();
      remote.destroy();
      if (!call.tunnels.delete(client)) return;
      this.logger.info(
        { org: call.org, ...target, bytesUp: moved.up, bytesDown: moved.down },
        'python egress tunnel closed',
      );
    };
    client.on('close', close);
    remote.on('close', close);
    client.resume();
  }

  /** Forwards one chunk unless the call is over its byte cap, which cuts every tunnel of the call. */
  private carry(call: CallEgress, from: Socket, to: Socket, chunk: Buffer): void {
    call.bytes += chunk.length;
    if (call.bytes > this.limits.maxBytesPerCall) {
      if (!call.cut) {
        call.cut = true;
        this.count('cut', 'byte-limit');
        this.logger.info(
          { org: call.org, limit: this.limits.maxBytesPerCall },
          'python egress byte cap reached; tunnels cut',
        );
      }
      for (const t of call.tunnels) t.destroy();
      return;
    }
    if (!to.write(chunk)) from.pause();
  }
}

function parseRequest(line: string | null): { token: string; host: string; port: number } {
  if (line === null) throw new Refusal('bad-request', 'the egress request line is too long');
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Refusal('bad-request', 'the egress request is not JSON');
  }
  const v = value as { token?: unknown; host?: unknown; port?: unknown };
  if (typeof v.token !== 'string' || typeof v.host !== 'string' || typeof v.port !== 'number' || v.host === '') {
    throw new Refusal('bad-request', 'the egress request needs token, host and port');
  }
  return { token: v.token, host: v.host, port: v.port };
}
