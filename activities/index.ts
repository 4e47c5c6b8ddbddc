import type { ActivityDeps } from './deps.js';
import { createCallbackActivities } from './callbacks.js';

/** Every activity the worker registers, built over the worker's dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createCallbackActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
