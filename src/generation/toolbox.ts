import type { Plan, PlanStep, PlanVariableType, ReviewProblem, StepBuild } from '../domain/generation/plan.js';
import type { WorkflowTool } from './workspace-workflows.js';

/**
 * What the agents may use besides Python, conditions and LLM agent nodes:
 * the actions of the integrations the run's workspace has connected (live
 * connections only, listed by workspace-tools.ts), each as one tool. Ids and
 * declared fields only: no credential is ever part of it. Every
 * integration_action step's build names one, whether a builder picked it or
 * a discovered process's binding fixed it.
 */
export interface Tool {
  connection_id: string;
  integration_id: string;
  /** The connection's integration, by name (what a prompt mentions). */
  integration: string;
  connection: string;
  action_version_id: string;
  action: string;
  description: string;
  /** input_data keys the action reads: a step using it names its inputs the same. */
  inputs: Array<{ name: string; type: PlanVariableType; optional: boolean }>;
  /** result keys the action sets: a step using it produces some of them. */
  outputs: Array<{ name: string; type: PlanVariableType }>;
}

/** The tool a build picked, when it is one of the workspace's. */
export function toolOf(tools: Tool[], build: StepBuild | undefined): Tool | undefined {
  const picked = build?.action;
  if (!picked) return undefined;
  return tools.find(
    (t) => t.connection_id === picked.connection_id && t.action_version_id === picked.action_version_id,
  );
}

/** A step using an action or a workflow reads each of its required inputs by name and produces only what it sets. */
function fitProblems(
  step: PlanStep,
  label: string,
  used: { inputs: Array<{ name: string; optional: boolean }>; outputs: Array<{ name: string }> },
): ReviewProblem[] {
  const problems: ReviewProblem[] = [];
  for (const input of used.inputs)
    if (!input.optional && !step.inputs.includes(input.name))
      problems.push({
        stepId: step.id,
        message: `${label} needs the input "${input.name}", which the step does not read`,
      });
  for (const output of step.outputs)
    if (!used.outputs.some((o) => o.name === output.name))
      problems.push({
        stepId: step.id,
        message: `${label} sets no "${output.name}" (it sets ${used.outputs.map((o) => o.name).join(', ') || 'nothing'})`,
      });
  return problems;
}

/**
 * An integration_action step must name a tool of the workspace, read every
 * required input of the action (under the action's input names) and produce
 * only outputs the action sets.
 */
export function actionStepProblems(plan: Plan, builds: Record<string, StepBuild>, tools: Tool[]): ReviewProblem[] {
  const problems: ReviewProblem[] = [];
  for (const step of plan.steps) {
    const build = builds[step.id];
    if (step.kind !== 'integration_action' || !build?.action) continue;
    const tool = toolOf(tools, build);
    if (!tool) {
      problems.push({
        stepId: step.id,
        message: `connection ${build.action.connection_id} with action version ${build.action.action_version_id} is not among the workspace's connected integrations`,
      });
      continue;
    }
    problems.push(...fitProblems(step, `${tool.integration}: ${tool.action}`, tool));
  }
  return problems;
}

/**
 * A call_workflow step must name one of the offered workflows, read every
 * required input of it (under its input names) and produce only its results.
 */
export function callStepProblems(
  plan: Plan,
  builds: Record<string, StepBuild>,
  workflows: WorkflowTool[],
): ReviewProblem[] {
  const problems: ReviewProblem[] = [];
  for (const step of plan.steps) {
    const call = builds[step.id]?.call;
    if (step.kind !== 'call_workflow' || !call) continue;
    const callee = workflows.find((w) => w.workflow_id === call.workflow_id);
    if (!callee) {
      problems.push({
        stepId: step.id,
        message: `workflow ${call.workflow_id} is not one of the workspace's active workflows offered for calls`,
      });
      continue;
    }
    problems.push(...fitProblems(step, `workflow ${callee.name}`, callee));
  }
  return problems;
}
