import { got } from 'got';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { pythonSandboxModes, type PythonSandboxMode } from '../python/types.js';

/** What the Python pool gauges read at each scrape. */
export interface PoolLoad {
  queued: number;
  busyServers: number;
  /** Calls that never ran since the pool started, by reason (queue full, deadline, cancelled). */
  shed: Record<string, number>;
  mode: PythonSandboxMode;
}

/** How one callback attempt went: delivered, to be retried, or given up (failed). */
export type CallbackOutcome = 'delivered' | 'retry' | 'failed';

/** Why a case's first callback attempt left the delivery to the retry workflow. */
export type FirstAttemptMiss = 'timeout' | 'answered' | 'error';

export interface Metrics {
  registry: Registry;
  /** Records one answered HTTP request (route: the pattern, not the raw path). */
  observeHttp(labels: { method: string; route: string; status: string }, seconds: number): void;
  /** A case's run was started (execute, or the recovery of an accepted one). */
  caseStarted(): void;
  /** A run recorded its case's end; `seconds` from execute to the end, when the case was executed. */
  caseFinished(status: string, seconds: number | undefined): void;
  /** One node of a finished case, by its handler class and status. */
  nodeFinished(labels: { kind: string; status: string }, seconds: number): void;
  callbackAttempt(outcome: CallbackOutcome): void;
  /** A case's first callback attempt (made in its run) is to be retried: a retry workflow starts. */
  callbackFirstAttemptMissed(reason: FirstAttemptMiss): void;
  /** The Python pool whose queue, busy servers and sandbox mode the gauges report (the worker's). */
  watchPythonPool(load: () => PoolLoad): void;
  /** Prometheus text: our registry, then the Temporal worker's metrics when a worker runs here. */
  render(): Promise<string>;
}

/**
 * Labels are bounded and name no tenant: kinds, statuses, outcomes, route
 * patterns. Per-workflow figures are an organization's own business; they are
 * served from the store by the authenticated API (GET /api/v1/stats/cases).
 *
 * HTTP request counts and latency by route and status, case, node and
 * callback metrics, the Python pool's load, process metrics, and the Temporal
 * worker's own metrics (served by the SDK runtime on a private port) appended
 * so operators scrape one endpoint. docs/grafana-dashboard.json charts them.
 */
export function createMetrics(workerMetricsUrl?: string): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const requests = new Counter({
    name: 'caseflow_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'caseflow_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  });
  const casesStarted = new Counter({
    name: 'caseflow_cases_started_total',
    help: 'Case runs started',
    registers,
  });
  const casesFinished = new Counter({
    name: 'caseflow_cases_finished_total',
    help: 'Cases that reached a terminal status in a run, by status',
    labelNames: ['status'] as const,
    registers,
  });
  const caseDuration = new Histogram({
    name: 'caseflow_case_duration_seconds',
    help: 'From execute to the terminal status, by status',
    labelNames: ['status'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers,
  });
  const nodeDuration = new Histogram({
    name: 'caseflow_node_duration_seconds',
    help: 'Node run time (its audit times) by kind (handler_class) and status',
    labelNames: ['kind', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const callbackAttempts = new Counter({
    name: 'caseflow_callback_attempts_total',
    help: 'Callback delivery attempts by outcome (delivered, retry, failed: given up)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const callbackFailures = new Counter({
    name: 'caseflow_callback_failures_total',
    help: 'Callback delivery attempts that did not deliver (to be retried or given up)',
    registers,
  });
  const firstAttemptMisses = new Counter({
    name: 'caseflow_callback_first_attempt_misses_total',
    help: "Cases' first callback attempts that start a retry workflow, by why: timeout (no answer in callbacks.timeoutMs), answered (not 2xx), error (connection)",
    labelNames: ['reason'] as const,
    registers,
  });
  let poolLoad: (() => PoolLoad) | undefined;
  new Gauge({
    name: 'caseflow_python_pool_queue_depth',
    help: 'Python calls waiting for a server',
    registers,
    collect() {
      if (poolLoad) this.set(poolLoad().queued);
    },
  });
  new Gauge({
    name: 'caseflow_python_pool_busy_servers',
    help: 'Python runner servers running at least one call',
    registers,
    collect() {
      if (poolLoad) this.set(poolLoad().busyServers);
    },
  });
  new Gauge({
    name: 'caseflow_python_sandbox_mode',
    help: 'How the Python pool runs tenant code: 1 for its mode (contained, unsandboxed, refusing), 0 for the others',
    labelNames: ['mode'] as const,
    registers,
    collect() {
      if (!poolLoad) return;
      const current = poolLoad().mode;
      // Every mode has a sample, so a panel or an alert on `refusing` reads 0 rather than nothing.
      for (const mode of pythonSandboxModes) this.set({ mode }, mode === current ? 1 : 0);
    },
  });
  new Counter({
    name: 'caseflow_python_calls_shed_total',
    help: 'Python calls that never ran: refused with a full queue (organization, total), dropped at their deadline, cancelled while waiting',
    labelNames: ['reason'],
    registers,
    collect() {
      if (!poolLoad) return;
      // The pool keeps the running totals; the counter mirrors them at each scrape.
      this.reset();
      for (const [reason, count] of Object.entries(poolLoad().shed)) this.inc({ reason }, count);
    },
  });

  return {
    registry,
    observeHttp(labels, seconds) {
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    caseStarted() {
      casesStarted.inc();
    },
    caseFinished(status, seconds) {
      casesFinished.inc({ status });
      if (seconds !== undefined) caseDuration.observe({ status }, seconds);
    },
    nodeFinished(labels, seconds) {
      nodeDuration.observe(labels, seconds);
    },
    callbackAttempt(outcome) {
      callbackAttempts.inc({ outcome });
      if (outcome !== 'delivered') callbackFailures.inc();
    },
    callbackFirstAttemptMissed(reason) {
      firstAttemptMisses.inc({ reason });
    },
    watchPythonPool(load) {
      poolLoad = load;
    },
    async render() {
      const own = await registry.metrics();
      if (!workerMetricsUrl) return own;
      try {
        const worker = await got(workerMetricsUrl, { timeout: { request: 2000 }, retry: { limit: 0 } }).text();
        return `${own}\n${worker}`;
      } catch {
        return own;
      }
    },
  };
}
