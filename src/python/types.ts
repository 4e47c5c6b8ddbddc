import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ValueType } from '../domain/vocabulary.js';
import type { ShedReason } from './call-queue.js';
import type { EgressOptions, EgressStats } from './egress.js';

/** A file input pre-resolved by the Node caller; code reads its bytes with `caseflow.read_file(url)`. */
export interface PythonFileInput {
  name: string;
  contentType: string;
  /** Sent to Python as raw bytes after the request's JSON header. */
  data: Uint8Array;
}

/** The marker a node returns for an output of type `file` (from `caseflow.make_file`). */
export interface PythonFileMarker {
  $file: { name: string; contentType: string; base64: string };
}

export interface PythonRunRequest {
  /** 'main': code node module defining main(inputs); 'script': integration action code at module level. */
  form: 'main' | 'script';
  source: string;
  /** main form: the argument of main(); script form: `input_data`. */
  inputs: Record<string, unknown>;
  /** script form only: the connection's secret, as `credential_value`. */
  credentialValue?: unknown;
  /** {variableName: allowed type names}; returned keys are checked against it. */
  declaredOutputs?: Record<string, ValueType[]>;
  /** Keyed by file URL. */
  files?: Record<string, PythonFileInput>;
  /** TCP through the egress proxy, to addresses the outbound policy allows; runs in the separate network pool. */
  network?: boolean;
  timeoutMs?: number;
  memoryMb?: number;
  /** Whose call this is: the pool shares its capacity fairly across organizations. */
  organizationId?: string;
  /**
   * Epoch ms by which the caller needs the answer (the activity's own timeout): a call that can
   * no longer run its whole `timeoutMs` before it leaves the queue as `busy`, never runs late.
   */
  deadline?: number;
  /** The caller gave up (the activity was cancelled): a call still waiting leaves the queue. */
  signal?: AbortSignal;
  /**
   * A network call's W3C trace context (`traceparent`, `tracestate`): every HTTP request the code makes
   * through http.client (urllib, requests) carries it, so the API called continues the case's trace.
   */
  traceContext?: Record<string, string>;
}

export interface PythonLogEntry {
  level: 'debug' | 'info' | 'warning' | 'error';
  message: string;
  at: string;
}

/** `busy`: the call never ran (queue full, or its deadline came first); another attempt later may run it. */
export type PythonErrorKind = 'timeout' | 'error' | 'limit' | 'sandbox' | 'output' | 'busy' | 'cancelled';

export type PythonRunResult =
  | {
      ok: true;
      outputs: Record<string, unknown>;
      logs: PythonLogEntry[];
      stdout: string;
      stderr: string;
      durationMs: number;
    }
  | {
      ok: false;
      error: PythonRunError;
      logs: PythonLogEntry[];
      stdout: string;
      stderr: string;
      durationMs: number;
    };

export interface PythonRunError {
  kind: PythonErrorKind;
  message: string;
  traceback?: string;
  /** `busy` only: when another attempt may find room. */
  retryAfterMs?: number;
}

/** One authoring-scan finding; the code endpoints return these as `metadata.violations`. */
export interface ScanViolation {
  line: number;
  col: number;
  message: string;
}

/**
 * How the pool runs tenant code: `contained` (full containment), `unsandboxed` (without it, the operator opted
 * in) or `refusing` (without it and not opted in, or the host refuses call limits: every run fails, scans still work).
 */
export const pythonSandboxModes = ['contained', 'unsandboxed', 'refusing'] as const;
export type PythonSandboxMode = (typeof pythonSandboxModes)[number];

export interface PythonPoolOptions {
  /** Fork servers in the isolated pool at most; 0: one per CPU (python.poolSize). */
  size: number;
  /**
   * Isolated fork servers kept started while idle, at most `size` (python.warmServers). The pool
   * grows towards `size` when every slot is taken or a call waits, and ends a
   * server beyond this many once it has had no call for `idleServerMs`.
   */
  warmServers: number;
  /** How long a server beyond `warmServers` may go without a call before it is ended (default 60 000). */
  idleServerMs?: number;
  /** Fork servers in the network pool, started on first network call (default: min(2, size)). */
  networkSize?: number;
  /** Calls in flight per server (each is its own forked child; default 4). */
  concurrencyPerServer?: number;
  /**
   * Scratch space of one call in MB (its own tmpfs, emptied when the call ends; python.scratchMb). The pool's
   * scratch space is at most (size + networkSize) × concurrencyPerServer × scratchMb.
   */
  scratchMb: number;
  /**
   * Children each server keeps forked and contained ahead of the next call, on free slots (default 1;
   * 0: every call forks its child when it arrives). Armed only while calls come: let go once a
   * server has had no call for `prearmIdleMs` (default 2 000), so an idle pool holds none.
   */
  prearmedPerServer?: number;
  prearmIdleMs?: number;
  /** Recycle a server after this many calls (default 1000). */
  recycleAfter?: number;
  /** A call's time limit when its request sets none (python.defaultTimeoutMs); a request may set up to 600 000. */
  defaultTimeoutMs: number;
  /** Calls one organization may have waiting for a server; more are refused at once as `busy` (python.maxQueuedPerOrganization). */
  maxQueuedPerOrganization: number;
  /** Calls waiting in all, the last guard (python.maxQueued). */
  maxQueued: number;
  /** Path to the policy JSON (default: config/python-policy.json of the project). */
  policyPath?: string;
  /** Run without full containment when the host lacks it (python.allowUnsandboxed; also CASEFLOW_PYTHON_ALLOW_UNSANDBOXED=1). */
  allowUnsandboxed: boolean;
  pythonPath?: string;
  /**
   * The bubblewrap binary (the service's: python.bwrapPath, config/default.json); absent there, the pool runs
   * unsandboxed or refuses.
   */
  bwrapPath: string;
  /** uid/gid of the servers when Node runs as root (default 65534 = nobody). */
  runAsUid?: number;
  runAsGid?: number;
  logger?: Logger;
  /** Test/diagnostics only: turn off the audit-hook policy layer to prove the OS layers on their own. */
  auditHook?: boolean;
  /** Network calls' egress: allowed private CIDRs (the service passes CASEFLOW_OUTBOUND_ALLOW_CIDRS) and per-call limits. */
  egress?: EgressOptions;
  /** Where the egress counter (`caseflow_python_egress_total`) is registered. */
  metricsRegistry?: Registry;
}

export interface PythonSandboxCapabilities {
  bwrap: boolean;
  userNamespaces: boolean;
  landlockAbi: number;
  seccomp: boolean;
  /** Each call's memory and CPU limits can be set (the host allows prlimit); without it no call can run. */
  callLimits: boolean;
  nonRootUid: boolean;
  arch: string;
  python: string;
  /** bwrap + Landlock + seccomp + call limits + non-root uid all present. */
  fullContainment: boolean;
  /** Why full containment is missing, empty when it is not. */
  problems: string[];
}

export interface PythonPoolStats {
  servers: number;
  networkServers: number;
  inFlight: number;
  /** Servers running at least one call. */
  busyServers: number;
  queued: number;
  /** The most calls one organization had waiting at once since the pool started. */
  peakQueuedPerOrganization: number;
  /** Calls sent to a server. */
  dispatched: number;
  /** Calls that never ran: refused with a full queue, dropped at their deadline, cancelled while waiting. */
  shed: Record<ShedReason, number>;
  completed: number;
  failed: number;
  timeouts: number;
  recycled: number;
  restarts: number;
  capabilities: PythonSandboxCapabilities | null;
  /** Host pids of the server processes (diagnostics and tests). */
  pids: number[];
  mode: PythonSandboxMode;
  /** Network calls' tunnels: allowed, refused by reason, cut by the byte cap. */
  egress: EgressStats;
}
