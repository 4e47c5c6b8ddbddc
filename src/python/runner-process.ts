import { spawn, type ChildProcess } from 'node:child_process';
import { encodeFrame, FrameReader, type RequestFrame } from './framing.js';
import type { LaunchSpec } from './launch.js';

/** What the Python server reports in its `ready` frame. */
export interface ServerCaps {
  landlockAbi: number;
  seccomp: boolean;
  /** The host let the server set a process's memory and CPU limits (prlimit), as it does for each call. */
  callLimits: boolean;
  uid: number;
  arch: string;
  network: boolean;
  python: string;
  errors: string[];
}

/** A raw response frame; the pool maps it onto PythonRunResult. */
export interface RawResponse {
  id: number;
  ok: boolean;
  [key: string]: unknown;
}

interface Pending {
  resolve: (r: RawResponse) => void;
  reject: (e: Error) => void;
}

export interface InitMessage {
  type: 'init';
  policy: unknown;
  network: boolean;
  requireContainment: boolean;
  auditHook: boolean;
  /** Network servers: path of the egress proxy's socket as the server sees it. */
  egressSocket: string | null;
  /**
   * One scratch directory per call slot: `${prefix}${k}` for k < slots (size-limited tmpfs mounts
   * made by bwrap; unsandboxed, plain directories the server makes, without a size limit).
   */
  scratch: { prefix: string; slots: number; mb: number };
  /**
   * Children kept forked and contained ahead of the next call (each on a free scratch slot), while
   * calls come: let go once no call has come for `idleMs`.
   */
  prearm: { children: number; idleMs: number };
}

const READY_TIMEOUT_MS = 15_000;
/** Same limit as MAX_REQUEST_BYTES in runner_server.py. */
export const MAX_REQUEST_BYTES = 64 << 20;

/** A request frame over the limit: that one call fails, nothing is sent. */
export class PythonRequestTooLarge extends Error {
  constructor(bytes: number) {
    super(`the Python request is ${bytes} bytes, over the limit of ${MAX_REQUEST_BYTES} bytes`);
    this.name = 'PythonRequestTooLarge';
  }
}

/** The server process died (or was gone) before it answered a call. */
export class PythonRunnerExited extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'PythonRunnerExited';
  }
}

/** One fork server process (bwrap + python) and its request/response bookkeeping. */
export class RunnerProcess {
  readonly pending = new Map<number, Pending>();
  calls = 0;
  draining = false;
  exited = false;
  private exitListeners: Array<(reason: string) => void> = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly caps: ServerCaps,
    readonly network: boolean,
  ) {}

  /** Host pid of the spawned process (bwrap, or python when unsandboxed). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  static start(spec: LaunchSpec, init: InitMessage): Promise<RunnerProcess> {
    return new Promise((resolveStart, rejectStart) => {
      const child = spawn(spec.command, spec.args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: {},
        cwd: '/',
        uid: spec.uid,
        gid: spec.gid,
      });
      const reader = new FrameReader();
      let proc: RunnerProcess | null = null;
      let stderr = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        rejectStart(new Error(`python runner did not become ready in ${READY_TIMEOUT_MS} ms: ${stderr.trim()}`));
      }, READY_TIMEOUT_MS);
      child.stderr.on('data', (d: Buffer) => {
        if (stderr.length < 16_384) stderr += d.toString('utf8');
      });
      child.stdin.on('error', () => {
        // EPIPE when the server died; the exit handler reports it.
      });
      child.on('error', (err) => {
        clearTimeout(timer);
        rejectStart(err);
      });
      child.stdout.on('data', (chunk: Buffer) => {
        for (const frame of reader.push(chunk)) {
          const f = frame as { type?: string; caps?: ServerCaps; bad?: true } & RawResponse;
          // A frame that is not JSON carries no id to route it by; the other calls go on.
          if (f.bad) continue;
          if (!proc) {
            if (f.type === 'ready' && f.caps) {
              clearTimeout(timer);
              proc = new RunnerProcess(child, f.caps, init.network);
              resolveStart(proc);
            }
            continue;
          }
          const p = proc.pending.get(f.id);
          if (p) {
            proc.pending.delete(f.id);
            p.resolve(f);
          }
        }
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        const reason = `python runner exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim().slice(0, 500)}` : ''}`;
        if (!proc) {
          rejectStart(new Error(reason));
          return;
        }
        proc.exited = true;
        for (const p of proc.pending.values()) p.reject(new PythonRunnerExited(reason));
        proc.pending.clear();
        for (const l of proc.exitListeners) l(reason);
      });
      child.stdin.write(encodeFrame(init));
    });
  }

  onExit(listener: (reason: string) => void): void {
    this.exitListeners.push(listener);
  }

  /** `encode` builds the frame for the id (which goes first in the header, so the server can answer even a request it cannot parse). */
  request(id: number, encode: (id: number) => RequestFrame): Promise<RawResponse> {
    this.calls += 1;
    return new Promise((resolve, reject) => {
      if (this.exited) {
        reject(new PythonRunnerExited('python runner is not running'));
        return;
      }
      const frame = encode(id);
      if (frame.bodyBytes > MAX_REQUEST_BYTES) {
        reject(new PythonRequestTooLarge(frame.bodyBytes));
        return;
      }
      this.pending.set(id, { resolve, reject });
      // One writev for the frame's parts: each separate write would wake the server for a few bytes.
      const stdin = this.child.stdin;
      if (!stdin) return;
      stdin.cork();
      for (const part of frame.parts) stdin.write(part);
      stdin.uncork();
    });
  }

  /** Lets in-flight calls finish: the server exits when stdin closes and its children are done. */
  endGracefully(): void {
    this.child.stdin?.end();
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
