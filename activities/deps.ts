import type { Infrastructure, Services } from '../src/composition.js';

/** What activities get from the process that hosts the worker: the same wired services as its API. */
export interface ActivityDeps extends Pick<Infrastructure, 'config' | 'logger' | 'python' | 'tracing'> {
  services: Services;
}
