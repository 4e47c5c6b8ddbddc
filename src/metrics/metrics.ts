import { got } from 'got';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** Records one answered HTTP request (route: the pattern, not the raw path). */
  observeHttp(labels: { method: string; route: string; status: string }, seconds: number): void;
  /** Prometheus text: our registry, then the Temporal worker's metrics when a worker runs here. */
  render(): Promise<string>;
}

/**
 * HTTP request counts and latency by route and status, process metrics, and
 * the Temporal worker's own metrics (served by the SDK runtime on a private
 * port) appended so operators scrape one endpoint.
 */
export function createMetrics(workerMetricsUrl?: string): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'caseflow_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'caseflow_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  return {
    registry,
    observeHttp(labels, seconds) {
      requests.inc(labels);
      duration.observe(labels, seconds);
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
