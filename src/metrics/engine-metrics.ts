import { Counter, Gauge, type Registry } from 'prom-client';
import type { EngineHealth } from '../temporal/engine-health.js';

const stateValue = { up: 1, down: 0, failed: -1 } as const;

/** The engine's state and the embedded server's restarts, read from EngineHealth at each scrape. */
export function watchEngine(registry: Registry, engine: EngineHealth): void {
  new Gauge({
    name: 'caseflow_temporal_engine_up',
    help: 'Whether the workflow engine answers: 1 up, 0 down (expected back), -1 failed (restart the process)',
    registers: [registry],
    collect() {
      this.set(stateValue[engine.current().state]);
    },
  });
  new Counter({
    name: 'caseflow_temporal_dev_server_restarts_total',
    help: 'Times the embedded Temporal dev server was started again after it died',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(engine.current().restarts);
    },
  });
}
