import type { StepBuild } from './plan.js';

/**
 * Step builds without zod in their module, because the generation-run
 * workflow (bundled) uses them too.
 */

/** A build with every answer empty: builders fill the one their step's kind needs. */
export const emptyBuild: StepBuild = {
  source: null,
  match: null,
  rules: null,
  llm: null,
  action: null,
  task: null,
  call: null,
  unresolved: null,
};

/** A step's build that says it could not be built. */
export function placeholderBuild(reason: string): StepBuild {
  return { ...emptyBuild, unresolved: reason };
}
