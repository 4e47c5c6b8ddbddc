import type { ActivityDeps } from './deps.js';

/** Every activity the worker registers, built over the worker's dependencies. */
export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
