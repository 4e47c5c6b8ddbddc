import { emptyBuild } from '../domain/generation/builds.js';
import type { Plan, ReviewProblem, StepBuild } from '../domain/generation/plan.js';
import type { IntegrationBinding } from './process-types.js';

/**
 * Integration steps of a plan. Every one is an integration_action step whose
 * build names a tool of the workspace (connection and action version); a
 * step naming an offered integration by key (a discovered process's binding)
 * gets that build here, the others from a builder picking among the tools.
 */
export function boundBuilds(plan: Plan, bindings: IntegrationBinding[]): Record<string, StepBuild> {
  const builds: Record<string, StepBuild> = {};
  for (const step of plan.steps) {
    const tool = bindings.find((b) => step.kind === 'integration_action' && b.key === step.integration)?.tool;
    if (tool)
      builds[step.id] = {
        ...emptyBuild,
        action: { connection_id: tool.connection_id, action_version_id: tool.action_version_id },
      };
  }
  return builds;
}

/** A step naming an integration the run does not offer by key: the architect's to fix. */
export function boundStepProblems(plan: Plan, bindings: IntegrationBinding[]): ReviewProblem[] {
  return plan.steps
    .filter((step) => step.integration !== null && !bindings.some((b) => b.key === step.integration))
    .map((step) => ({
      stepId: step.id,
      message: `Step "${step.name}" names integration ${JSON.stringify(step.integration)}, which is not one of the connected integrations offered`,
    }));
}
