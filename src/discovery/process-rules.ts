import type { DurationRange, DurationUnit, ProcessContent, Step, TaggedItem } from '../domain/discovery-process.js';

/** One broken rule, with the JSON path of the offending value (`steps.2.branchSourceStepId`). */
export interface ProcessProblem {
  path: string;
  message: string;
}

const secondsPer: Record<DurationUnit, number> = {
  seconds: 1,
  minutes: 60,
  hours: 3600,
  days: 86_400,
  weeks: 7 * 86_400,
  // A calendar month varies; 30 days is close enough to order two bounds.
  months: 30 * 86_400,
};

const inSeconds = (bound: DurationRange['min']) => bound.value * secondsPer[bound.unit];

function duplicates(ids: string[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const id of ids) (seen.has(id) ? twice : seen).add(id);
  return twice;
}

function listProblems(path: string, items: TaggedItem[]): ProcessProblem[] {
  return [...duplicates(items.map((item) => item.id))].map((id) => ({ path, message: `duplicate id ${id}` }));
}

function rangeProblems(path: string, range: DurationRange | null): ProcessProblem[] {
  if (!range || inSeconds(range.min) <= inSeconds(range.max)) return [];
  return [{ path, message: 'min must not exceed max' }];
}

/** What places a step on a branch: meaningless without a branchId. */
const branchOnlyFields = ['branchLabel', 'branchSourceStepId', 'branchRejoinStepId'] as const;
/** What every step of one branch shares. branchOrder is also on main-line steps (0 unless given), as the contract has it. */
const branchFields = [...branchOnlyFields, 'branchOrder'] as const;

/**
 * Branch rules: label, source and rejoin only on a step that names its branch; a branch
 * leaves from an existing step outside it, rejoins (if at all) an existing
 * step outside it other than its source; every step of one branch agrees on
 * label, source, rejoin and order; branches leaving one step have distinct orders.
 */
function branchProblems(steps: Step[], stepIds: Set<string>): ProcessProblem[] {
  const problems: ProcessProblem[] = [];
  const firstOfBranch = new Map<string, Step>();
  steps.forEach((step, index) => {
    const at = `steps.${index}`;
    if (step.branchId === null) {
      for (const field of branchOnlyFields) {
        if (step[field] !== null) problems.push({ path: `${at}.${field}`, message: `${field} needs branchId` });
      }
      return;
    }
    const first = firstOfBranch.get(step.branchId);
    if (first) {
      for (const field of branchFields) {
        if (step[field] !== first[field])
          problems.push({ path: `${at}.${field}`, message: `differs from the other steps of branch ${step.branchId}` });
      }
      return;
    }
    firstOfBranch.set(step.branchId, step);
    if (step.branchOrder === null) problems.push({ path: `${at}.branchOrder`, message: 'required with branchId' });
    if (step.branchSourceStepId === null)
      problems.push({ path: `${at}.branchSourceStepId`, message: 'required with branchId' });
    else if (!stepIds.has(step.branchSourceStepId))
      problems.push({ path: `${at}.branchSourceStepId`, message: `no step ${step.branchSourceStepId}` });
    if (step.branchRejoinStepId !== null) {
      if (!stepIds.has(step.branchRejoinStepId))
        problems.push({ path: `${at}.branchRejoinStepId`, message: `no step ${step.branchRejoinStepId}` });
      else if (step.branchRejoinStepId === step.branchSourceStepId)
        problems.push({ path: `${at}.branchRejoinStepId`, message: 'a branch cannot rejoin the step it leaves from' });
    }
  });
  const branchOf = new Map(steps.map((step) => [step.id, step.branchId]));
  const ordersBySource = new Map<string, Map<number, string>>();
  for (const [branchId, step] of firstOfBranch) {
    const at = `steps.${steps.indexOf(step)}`;
    for (const field of ['branchSourceStepId', 'branchRejoinStepId'] as const) {
      const target = step[field];
      if (target !== null && branchOf.get(target) === branchId)
        problems.push({ path: `${at}.${field}`, message: `${target} is inside branch ${branchId} itself` });
    }
    if (step.branchSourceStepId === null || step.branchOrder === null) continue;
    const orders = ordersBySource.get(step.branchSourceStepId) ?? new Map<number, string>();
    ordersBySource.set(step.branchSourceStepId, orders);
    const taken = orders.get(step.branchOrder);
    if (taken !== undefined)
      problems.push({
        path: `${at}.branchOrder`,
        message: `branch ${taken} leaving ${step.branchSourceStepId} already has order ${step.branchOrder}`,
      });
    else orders.set(step.branchOrder, branchId);
  }
  return problems;
}

/** stepOrder is a position on a line (the main line or one branch): unique there. */
function orderProblems(steps: Step[]): ProcessProblem[] {
  const problems: ProcessProblem[] = [];
  const seen = new Set<string>();
  steps.forEach((step, index) => {
    if (step.stepOrder === null) return;
    const key = `${step.branchId ?? ''}\u0000${step.stepOrder}`;
    if (seen.has(key))
      problems.push({
        path: `steps.${index}.stepOrder`,
        message: `stepOrder ${step.stepOrder} is taken on ${step.branchId === null ? 'the main line' : `branch ${step.branchId}`}`,
      });
    seen.add(key);
  });
  return problems;
}

/** Every rule the shapes alone cannot express; an empty list means the document is consistent. */
export function processProblems(content: ProcessContent): ProcessProblem[] {
  const problems: ProcessProblem[] = [];
  const stepIds = new Set(content.steps.map((step) => step.id));
  const twiceSteps = duplicates(content.steps.map((step) => step.id));
  content.steps.forEach((step, index) => {
    const at = `steps.${index}`;
    if (twiceSteps.has(step.id)) problems.push({ path: `${at}.id`, message: `duplicate step id ${step.id}` });
    if (step.durationUnit === null && step.duration !== null)
      problems.push({ path: `${at}.durationUnit`, message: 'required with duration' });
    problems.push(
      ...rangeProblems(`${at}.durationRange`, step.durationRange),
      ...rangeProblems(`${at}.waitingTimeRange`, step.waitingTimeRange),
    );
    for (const list of [
      'inputs',
      'outputs',
      'integrations',
      'rules',
      'departments',
      'performers',
      'painPoints',
    ] as const) {
      problems.push(...listProblems(`${at}.${list}`, step[list]));
    }
  });
  const twiceEdges = duplicates(content.customEdges.map((edge) => edge.id));
  content.customEdges.forEach((edge, index) => {
    const at = `customEdges.${index}`;
    if (twiceEdges.has(edge.id)) problems.push({ path: `${at}.id`, message: `duplicate edge id ${edge.id}` });
    if (!stepIds.has(edge.sourceStepId))
      problems.push({ path: `${at}.sourceStepId`, message: `no step ${edge.sourceStepId}` });
    if (!stepIds.has(edge.targetStepId))
      problems.push({ path: `${at}.targetStepId`, message: `no step ${edge.targetStepId}` });
  });
  for (const list of ['processInputs', 'processOutputs', 'processIntegrations', 'processRules'] as const) {
    problems.push(...listProblems(list, content[list]));
  }
  return [...problems, ...branchProblems(content.steps, stepIds), ...orderProblems(content.steps)];
}
