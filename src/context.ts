import type { Infrastructure, Services } from './composition.js';
import type { Metrics } from './metrics/metrics.js';

/** What the API's routers are built over; one per process. Routes reach the store only through `services`. */
export interface AppContext extends Infrastructure {
  metrics: Metrics;
  services: Services;
}
