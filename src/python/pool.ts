import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import type { Config } from '../config/config.js';
import { CallQueue, PythonPoolBusy, type CallKind, type QueuedCall } from './call-queue.js';
import { assessCapabilities, limitsRefused, refusalMessage, UNSANDBOXED_ENV } from './capabilities.js';
import { EgressProxy } from './egress.js';
import { encodeRequest } from './framing.js';
import { buildLaunch, SANDBOX_EGRESS_DIR, SANDBOX_SCRATCH_PREFIX, type LaunchSpec } from './launch.js';
import { findProjectFile, stageRunner, stageScratch } from './paths.js';
import { toRunResult, toViolations } from './results.js';
import { PythonRunnerExited, RunnerProcess, type InitMessage, type RawResponse } from './runner-process.js';
import type {
  PythonPoolOptions,
  PythonPoolStats,
  PythonRunRequest,
  PythonRunResult,
  PythonSandboxCapabilities,
  PythonSandboxMode,
  ScanViolation,
} from './types.js';

export type * from './types.js';
export { PythonPoolBusy } from './call-queue.js';

/** The pool options whose one default is the configuration (python.*, config/default.json): every caller's pool. */
export function configuredPoolOptions(
  python: Config['python'],
): Pick<
  PythonPoolOptions,
  | 'size'
  | 'warmServers'
  | 'allowUnsandboxed'
  | 'bwrapPath'
  | 'defaultTimeoutMs'
  | 'maxQueuedPerOrganization'
  | 'maxQueued'
  | 'scratchMb'
> {
  return {
    size: python.poolSize,
    warmServers: python.warmServers,
    allowUnsandboxed: python.allowUnsandboxed,
    bwrapPath: python.bwrapPath,
    defaultTimeoutMs: python.defaultTimeoutMs,
    maxQueuedPerOrganization: python.maxQueuedPerOrganization,
    maxQueued: python.maxQueued,
    scratchMb: python.scratchMb,
  };
}

type Kind = CallKind;

interface Call extends QueuedCall {
  /** The request's JSON header; the attachments (file bytes) follow it in the frame. */
  header: Record<string, unknown>;
  attachments: Uint8Array[];
  done: (r: RawResponse | Error) => void;
  /** Set once the call was queued again after its server died under it (it is never run a third time). */
  rerun?: true;
}

interface Settings {
  size: number;
  warm: number;
  idleServerMs: number;
  networkSize: number;
  concurrency: number;
  recycleAfter: number;
  defaultTimeoutMs: number;
  maxQueuedPerOrganization: number;
  maxQueued: number;
  scratchMb: number;
  prearm: { children: number; idleMs: number };
}

/** Past a call's own timeout (which the server enforces by killing the child), the server itself is suspect. */
const WATCHDOG_GRACE_MS = 5_000;
const SCAN_TIMEOUT_MS = 5_000;
/** How long a call whose server died waits before it is queued again. */
const RERUN_DELAY_MS = 500;
const MAX_TIMEOUT_MS = 600_000;

/**
 * Warm pool of sandboxed Python fork servers. Each call forks one contained
 * child inside a server; servers are recycled after `recycleAfter` calls and
 * replaced when they die or stop answering.
 */
export class PythonRunnerPool {
  private readonly servers: Record<Kind, RunnerProcess[]> = { isolated: [], network: [] };
  private readonly starting: Record<Kind, number> = { isolated: 0, network: 0 };
  private readonly failures: Record<Kind, number> = { isolated: 0, network: 0 };
  private readonly queue: CallQueue<Call>;
  private nextId = 0;
  private closed = false;
  private readonly counters = { completed: 0, failed: 0, timeouts: 0, recycled: 0, restarts: 0 };
  /** When each isolated server last finished a call (or started): the idle ones beyond the warm count are ended. */
  private readonly lastActive = new Map<RunnerProcess, number>();
  private readonly idleCheck: NodeJS.Timeout;

  private constructor(
    private readonly settings: Settings,
    private readonly logger: Logger,
    private readonly runnerDir: string,
    private readonly launch: (network: boolean) => LaunchSpec,
    private readonly init: (network: boolean) => InitMessage,
    private readonly mode: PythonSandboxMode,
    private readonly caps: PythonSandboxCapabilities,
    private readonly egress: EgressProxy,
  ) {
    this.queue = new CallQueue({ perOrganization: settings.maxQueuedPerOrganization, total: settings.maxQueued });
    this.idleCheck = setInterval(() => this.shrinkIdle(), Math.max(1, settings.idleServerMs / 2));
    this.idleCheck.unref();
  }

  static async create(options: PythonPoolOptions): Promise<PythonRunnerPool> {
    const logger = options.logger ?? pino({ enabled: false });
    const cpus = availableParallelism();
    const size = Math.max(1, options.size || cpus);
    const settings: Settings = {
      size,
      warm: Math.min(size, Math.max(1, options.warmServers)),
      idleServerMs: Math.max(1, options.idleServerMs ?? 60_000),
      networkSize: Math.max(1, options.networkSize ?? Math.min(2, size)),
      concurrency: Math.max(1, options.concurrencyPerServer ?? 4),
      recycleAfter: Math.max(1, options.recycleAfter ?? 1000),
      defaultTimeoutMs: options.defaultTimeoutMs,
      maxQueuedPerOrganization: Math.max(1, options.maxQueuedPerOrganization),
      maxQueued: Math.max(1, options.maxQueued),
      scratchMb: Math.max(1, options.scratchMb),
      prearm: {
        children: Math.max(0, options.prearmedPerServer ?? 1),
        idleMs: Math.max(0, options.prearmIdleMs ?? 2_000),
      },
    };
    const policyPath = options.policyPath ?? findProjectFile('config/python-policy.json');
    const policy: unknown = JSON.parse(await readFile(policyPath, 'utf8'));
    const runnerDir = await stageRunner();
    const asRoot = process.getuid?.() === 0;
    const uid = asRoot ? (options.runAsUid ?? 65534) : undefined;
    const gid = asRoot ? (options.runAsGid ?? 65534) : undefined;
    const pythonPath = options.pythonPath ?? '/usr/bin/python3';
    const { bwrapPath } = options;
    const auditHook = options.auditHook ?? true;
    const egress = await EgressProxy.start(
      options.egress ?? {},
      logger.child({ component: 'python-egress' }),
      options.metricsRegistry,
    );
    let hostScratch = '';
    let servers = 0;
    const initFor = (network: boolean, requireContainment: boolean, sandboxed: boolean): InitMessage => ({
      type: 'init',
      policy,
      network,
      requireContainment,
      auditHook,
      egressSocket: network ? EgressProxy.socketIn(sandboxed ? SANDBOX_EGRESS_DIR : egress.dir) : null,
      scratch: {
        prefix: sandboxed ? SANDBOX_SCRATCH_PREFIX : `${hostScratch}/${(servers += 1)}-`,
        slots: settings.concurrency,
        mb: settings.scratchMb,
      },
      prearm: settings.prearm,
    });

    // Probe: start the first sandboxed server; its ready frame reports Landlock/seccomp/uid.
    let probe: RunnerProcess | null = null;
    let bwrapError: string | null = null;
    const launchFor = (network: boolean, sandboxed: boolean): LaunchSpec =>
      buildLaunch({
        runnerDir,
        pythonPath,
        bwrapPath,
        network,
        sandboxed,
        egressDir: egress.dir,
        scratchSlots: settings.concurrency,
        scratchMb: settings.scratchMb,
        uid,
        gid,
      });
    if (!existsSync(bwrapPath)) {
      bwrapError = `not found at ${bwrapPath} (install the bubblewrap package)`;
    } else {
      try {
        probe = await RunnerProcess.start(launchFor(false, true), initFor(false, true, true));
      } catch (err) {
        bwrapError = err instanceof Error ? err.message : String(err);
      }
    }
    const caps = assessCapabilities(bwrapError, probe?.caps ?? null);
    logger.info({ capabilities: caps }, 'python sandbox capabilities');
    const optedIn = options.allowUnsandboxed || process.env[UNSANDBOXED_ENV] === '1';
    let mode: PythonSandboxMode = 'contained';
    if (!caps.fullContainment) {
      // Opting in to less containment does not make a call's limits settable: every call would still fail.
      mode = optedIn && !limitsRefused(caps) ? 'unsandboxed' : 'refusing';
      if (mode === 'unsandboxed')
        logger.warn({ problems: caps.problems }, 'python runs WITHOUT full containment (operator opted in)');
      else logger.error({ problems: caps.problems }, refusalMessage(caps));
      probe?.kill();
      probe = null;
    }
    // Without full containment the servers still apply whatever layers exist;
    // in 'refusing' mode they only serve the authoring scan.
    const sandboxed = bwrapError === null;
    if (!sandboxed) hostScratch = await stageScratch(runnerDir);
    const launch = (network: boolean): LaunchSpec => launchFor(network, sandboxed);
    const pool = new PythonRunnerPool(
      settings,
      logger,
      runnerDir,
      launch,
      (network) => initFor(network, mode === 'contained', sandboxed),
      mode,
      caps,
      egress,
    );
    if (probe) pool.adopt('isolated', probe);
    await pool.fill('isolated');
    return pool;
  }

  /** Runs customer code; never throws — failures come back as `{ ok: false, error }`. */
  async run(request: PythonRunRequest): Promise<PythonRunResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round((performance.now() - started) * 1000) / 1000;
    const refuse = (message: string): PythonRunResult => ({
      ok: false,
      error: { kind: 'sandbox', message },
      logs: [],
      stdout: '',
      stderr: '',
      durationMs: elapsed(),
    });
    if (this.closed) return refuse('the Python runner pool is closed');
    if (this.mode === 'refusing') return refuse(refusalMessage(this.caps));
    // Callers are typed, but the pool is the last gate before untrusted code runs: check anyway.
    const { form, source } = request as { form: unknown; source: unknown };
    if (form !== 'main' && form !== 'script') return refuse(`unknown form '${String(form)}'`);
    if (typeof source !== 'string') return refuse('source must be a string');
    const network = request.network === true;
    const org = request.organizationId ?? '';
    const timeoutMs = Math.min(Math.max(request.timeoutMs ?? this.settings.defaultTimeoutMs, 50), MAX_TIMEOUT_MS);
    const files = Object.entries(request.files ?? {});
    // Only this call's child receives the token; the proxy admits its tunnels by it and attributes them to `org`.
    const egressToken = network ? this.egress.openCall(org) : null;
    const header: Record<string, unknown> = {
      op: 'run',
      form: request.form,
      source: request.source,
      inputs: request.inputs,
      credentialValue: request.credentialValue ?? null,
      declaredOutputs: request.declaredOutputs ?? null,
      files: files.map(([url, f]) => ({ url, name: f.name, contentType: f.contentType, size: f.data.length })),
      network,
      egressToken,
      traceContext: network ? (request.traceContext ?? null) : null,
      timeoutMs,
      memoryMb: request.memoryMb ?? 256,
    };
    let raw: RawResponse | Error;
    try {
      raw = await this.call({
        kind: network ? 'network' : 'isolated',
        org,
        header,
        attachments: files.map(([, f]) => f.data),
        timeoutMs,
        deadline: request.deadline ?? Infinity,
        signal: request.signal,
      });
    } finally {
      if (egressToken) this.egress.closeCall(egressToken);
    }
    const result = toRunResult(raw, elapsed());
    if (result.ok) this.counters.completed += 1;
    else if (!(raw instanceof PythonPoolBusy)) {
      this.counters.failed += 1;
      if (result.error.kind === 'timeout') this.counters.timeouts += 1;
    }
    return result;
  }

  /**
   * Authoring scan (in a contained child). An unscannable source yields a violation, not an
   * exception; a full queue throws PythonPoolBusy (the caller answers 429/503).
   */
  async scan(source: string, form: 'main' | 'script', organizationId = ''): Promise<ScanViolation[]> {
    if (this.closed) throw new Error('the Python runner pool is closed');
    const raw = await this.call({
      kind: 'isolated',
      org: organizationId,
      header: { op: 'scan', source, form, timeoutMs: SCAN_TIMEOUT_MS },
      attachments: [],
      timeoutMs: SCAN_TIMEOUT_MS,
      deadline: Infinity,
    });
    if (raw instanceof PythonPoolBusy) throw raw;
    return toViolations(raw);
  }

  stats(): PythonPoolStats {
    const all = [...this.servers.isolated, ...this.servers.network];
    return {
      servers: this.servers.isolated.filter((s) => !s.draining).length,
      networkServers: this.servers.network.filter((s) => !s.draining).length,
      inFlight: all.reduce((n, s) => n + s.inFlight, 0),
      busyServers: all.filter((s) => s.inFlight > 0).length,
      ...this.queue.stats(),
      ...this.counters,
      capabilities: this.caps,
      pids: all.filter((s) => !s.exited).map((s) => s.pid ?? 0),
      mode: this.mode,
      egress: this.egress.stats(),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleCheck);
    for (const call of this.queue.takeAll(() => true)) call.done(new Error('the Python runner pool is closed'));
    for (const s of [...this.servers.isolated, ...this.servers.network]) s.kill();
    await this.egress.close();
    await rm(this.runnerDir, { recursive: true, force: true });
  }

  // --- dispatch ---------------------------------------------------------

  /** Queues the call (or sheds it at once); resolves with the server's answer or why it did not run. */
  private call(call: Omit<Call, 'done' | 'shed'>): Promise<RawResponse | Error> {
    return new Promise((done) => {
      this.queue.add({ ...call, done, shed: (reason) => done(new PythonPoolBusy(reason)) });
      if (call.kind === 'network' && this.servers.network.length === 0 && this.starting.network === 0) {
        void this.fill('network');
      }
      this.pump();
    });
  }

  private pick(kind: Kind): RunnerProcess | null {
    let best: RunnerProcess | null = null;
    for (const s of this.servers[kind]) {
      if (s.draining || s.exited || s.inFlight >= this.settings.concurrency) continue;
      if (!best || s.inFlight < best.inFlight) best = s;
    }
    return best;
  }

  private pump(): void {
    const serverFor = (kind: Kind) => this.pick(kind);
    const capFor = (kind: Kind) => this.orgCap(kind);
    for (let next = this.queue.next(serverFor, capFor); next; next = this.queue.next(serverFor, capFor)) {
      this.dispatch(next.server, next.call);
    }
    this.growIfFull();
  }

  /**
   * One more isolated server (up to `size`) when every slot is taken or a call
   * still waits: started ahead of the next call rather than after it queued.
   */
  private growIfFull(): void {
    if (this.closed || this.starting.isolated > 0) return;
    const live = this.servers.isolated.filter((s) => !s.draining);
    if (live.length >= this.settings.size) return;
    const free = live.reduce((n, s) => n + Math.max(0, this.settings.concurrency - s.inFlight), 0);
    if (free === 0 || this.queue.waitingOf('isolated') > 0) void this.startServer('isolated');
  }

  /** Ends isolated servers beyond the warm count that have had no call for `idleServerMs`, one per check. */
  private shrinkIdle(): void {
    const live = this.servers.isolated.filter((s) => !s.draining);
    if (live.length <= this.settings.warm) return;
    const since = Date.now() - this.settings.idleServerMs;
    const idle = live.find((s) => s.inFlight === 0 && (this.lastActive.get(s) ?? 0) <= since);
    if (!idle) return;
    idle.draining = true;
    idle.endGracefully();
  }

  /**
   * How many calls one organization may run at once: no organization may fill a pool, one slot
   * always stays for the others, so one tenant's spinning code cannot hold another tenant's
   * trivial call in the queue.
   */
  private orgCap(kind: Kind): number {
    const capacity = this.servers[kind].filter((s) => !s.draining).length * this.settings.concurrency;
    return Math.max(1, capacity - 1);
  }

  private dispatch(server: RunnerProcess, call: Call): void {
    this.nextId += 1;
    let watchdogFired = false;
    const watchdog = setTimeout(() => {
      watchdogFired = true;
      this.logger.warn({ timeoutMs: call.timeoutMs }, 'python runner stopped answering; replacing it');
      server.kill();
    }, call.timeoutMs + WATCHDOG_GRACE_MS);
    let runAgain = false;
    server
      .request(this.nextId, (id) => encodeRequest({ id, ...call.header }, call.attachments))
      .then(
        (r) => call.done(r),
        (err: unknown) => {
          runAgain = this.runsAgain(call, err, watchdogFired);
          if (!runAgain) call.done(err instanceof Error ? err : new Error(String(err)));
        },
      )
      .finally(() => {
        clearTimeout(watchdog);
        if (!server.network) this.lastActive.set(server, Date.now());
        this.queue.finished(call);
        if (runAgain) {
          call.rerun = true;
          this.logger.warn({ kind: call.kind }, 'python runner died under a call; running the call again');
          // A moment first, so servers killed together with this one (every runner at once) are known gone.
          setTimeout(() => this.requeue(call), RERUN_DELAY_MS);
        }
        if (server.draining && server.inFlight === 0) server.endGracefully();
        this.pump();
      });
    if (server.calls >= this.settings.recycleAfter && !server.draining) this.recycle(server);
  }

  private requeue(call: Call): void {
    if (this.closed) {
      call.done(new Error('the Python runner pool is closed'));
      return;
    }
    this.queue.add(call);
    this.pump();
  }

  /**
   * A call whose server died under it (killed from outside, by the OOM killer) is queued once more,
   * for a fresh server: isolated code touches nothing outside its sandbox, so running it again is
   * safe, as Temporal runs an activity again when a worker dies. Never a call that reached the
   * network (its side effects may have happened: the node's own attempts decide), one whose own
   * watchdog killed the server (it overran), or one that already ran again.
   */
  private runsAgain(call: Call, err: unknown, watchdogFired: boolean): boolean {
    return (
      err instanceof PythonRunnerExited && call.kind === 'isolated' && !watchdogFired && !call.rerun && !this.closed
    );
  }

  // --- server lifecycle -------------------------------------------------

  private recycle(server: RunnerProcess): void {
    server.draining = true;
    this.counters.recycled += 1;
    void this.startServer(server.network ? 'network' : 'isolated');
    if (server.inFlight === 0) server.endGracefully();
  }

  private adopt(kind: Kind, server: RunnerProcess): void {
    this.servers[kind].push(server);
    if (kind === 'isolated') this.lastActive.set(server, Date.now());
    server.onExit((reason) => {
      this.servers[kind] = this.servers[kind].filter((s) => s !== server);
      this.lastActive.delete(server);
      if (this.closed || server.draining) return;
      this.counters.restarts += 1;
      this.logger.warn({ reason }, 'python runner died; starting a replacement');
      void this.startServer(kind);
    });
    this.pump();
  }

  private async fill(kind: Kind): Promise<void> {
    const target = kind === 'isolated' ? this.settings.warm : this.settings.networkSize;
    const missing = target - this.servers[kind].filter((s) => !s.draining).length - this.starting[kind];
    await Promise.all(Array.from({ length: Math.max(0, missing) }, () => this.startServer(kind)));
  }

  private async startServer(kind: Kind): Promise<void> {
    if (this.closed) return;
    this.starting[kind] += 1;
    const network = kind === 'network';
    try {
      const server = await RunnerProcess.start(this.launch(network), this.init(network));
      this.failures[kind] = 0;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may run while the server starts
      if (this.closed) server.kill();
      else this.adopt(kind, server);
    } catch (err) {
      this.failures[kind] += 1;
      const delay = Math.min(100 * 2 ** this.failures[kind], 5_000);
      this.logger.error({ err, kind, retryInMs: delay }, 'python runner failed to start');
      if (this.failures[kind] >= 5 && this.servers[kind].length === 0) this.failQueued(kind, err);
      setTimeout(() => void this.startServer(kind), delay).unref();
    } finally {
      this.starting[kind] -= 1;
    }
  }

  private failQueued(kind: Kind, err: unknown): void {
    const message = `python runner cannot start: ${err instanceof Error ? err.message : String(err)}`;
    for (const call of this.queue.takeAll((c) => c.kind === kind)) call.done(new Error(message));
  }
}
