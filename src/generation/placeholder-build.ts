import type { StepBuild } from './plan.js';

/**
 * A step's build that says it could not be built. Its own module without
 * zod, because the generation-run workflow (bundled) uses it too.
 */
export function placeholderBuild(reason: string): StepBuild {
  return { source: null, match: null, rules: null, unresolved: reason };
}
