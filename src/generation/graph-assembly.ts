import { createHash } from 'node:crypto';
import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from '../domain/graph.js';
import type { ConditionRule } from '../domain/node-kinds/condition.js';
import type { VariableSchema } from '../domain/variables.js';
import { routeProperty } from '../domain/graph-validation.js';
import {
  parseJsonText,
  type Plan,
  type PlanStep,
  type PlanVariableType,
  type ReviewProblem,
  type StepBuild,
} from '../domain/generation/plan.js';

/**
 * Turns the architect's plan and the builders' answers into a workflow graph
 * the case engine runs. Ids are derived from the run and the plan (UUID v5
 * shape), so a step keeps its node id from the skeleton to the final version.
 */
export interface AssembledGraph {
  graph: WorkflowGraph;
  /** Node id → step id, to send the engine's and validator's errors back to the right builder. */
  stepOfNode: Record<string, string>;
  problems: ReviewProblem[];
  sampleInputs: Record<string, unknown>;
}

export function stableId(seed: string, key: string): string {
  const hex = createHash('sha1').update(`${seed}:${key}`).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/** The Python a step gets when it could not be built: it fails clearly if run, so nothing pretends to work. */
export function placeholderSource(step: PlanStep, reason: string): string {
  const message = `Step "${step.name}" needs attention: ${reason}`
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\n/g, ' ');
  return `def main(inputs):\n    raise NotImplementedError("${message}")\n`;
}

interface End {
  nodeId: string;
  /** Set on a condition's branch end: the route edge (taken when true, or its complement). */
  route?: { routeId: string; when: boolean };
  /** `${conditionStepId}:${when}` for an open branch. */
  branchKey?: string;
}

/** The open ends after a routing node: its one end becomes the two sides of its route. */
function branchOut(ends: End[], stepId: string, nodeId: string, routeId: string): End[] {
  return ends.flatMap((e) =>
    e.nodeId === nodeId
      ? [
          { nodeId, route: { routeId, when: true }, branchKey: `${stepId}:true` },
          { nodeId, route: { routeId, when: false }, branchKey: `${stepId}:false` },
        ]
      : [e],
  );
}

class Builder {
  nodes: Record<string, WorkflowNode> = {};
  edges: Record<string, WorkflowEdge> = {};
  stepOfNode: Record<string, string> = {};
  problems: ReviewProblem[] = [];
  /** variable name → producing node ids, in the order they were added. */
  producers = new Map<string, string[]>();
  parents = new Map<string, string[]>();

  constructor(readonly seed: string) {}

  id(key: string): string {
    return stableId(this.seed, key);
  }

  connect(end: End, to: string): void {
    const id = this.id(`edge:${end.nodeId}:${to}:${end.route ? String(end.route.when) : 'plain'}`);
    this.edges[id] = {
      id,
      from_node_id: end.nodeId,
      to_node_id: to,
      ...(end.route ? { route_id: end.route.routeId, ...(end.route.when ? {} : { route_complement: true }) } : {}),
    };
    this.parents.set(to, [...(this.parents.get(to) ?? []), end.nodeId]);
  }

  ancestors(nodeId: string): Set<string> {
    const seen = new Set<string>();
    const queue = [...(this.parents.get(nodeId) ?? [])];
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i] ?? '';
      if (seen.has(id)) continue;
      seen.add(id);
      queue.push(...(this.parents.get(id) ?? []));
    }
    return seen;
  }

  /** The latest upstream producer of each name, as input_schema + variable_mappings; unknown names are problems. */
  wire(
    nodeId: string,
    names: string[],
    stepId: string | null,
    label: string,
  ): Pick<WorkflowNode, 'input_schema' | 'variable_mappings'> {
    const ancestors = this.ancestors(nodeId);
    const schema: VariableSchema['schema'] = {};
    const mappings: NonNullable<WorkflowNode['variable_mappings']> = {};
    for (const name of new Set(names)) {
      const from = (this.producers.get(name) ?? []).filter((p) => ancestors.has(p)).at(-1);
      if (!from) {
        this.problems.push({
          stepId,
          message: `${label} reads "${name}", which no workflow input or earlier step on its path provides`,
        });
        continue;
      }
      const producer = this.nodes[from];
      const variable = Object.values(producer?.output_schema?.schema ?? {}).find((v) => v.variable_name === name);
      if (!producer || !variable) continue;
      const id = this.id(`in:${nodeId}:${name}`);
      schema[id] = { id, variable_name: name, allowed_types: variable.allowed_types };
      mappings[id] = { from_node_id: from, from_variable_id: variable.id };
    }
    return { input_schema: { schema, variable_addition_allowed: false }, variable_mappings: mappings };
  }

  produce(
    nodeId: string,
    outputs: Array<{ name: string; type: PlanVariableType; allowed_file_types?: string[] | null }>,
  ): VariableSchema {
    const schema: VariableSchema['schema'] = {};
    for (const output of outputs) {
      const id = this.id(`out:${nodeId}:${output.name}`);
      const fileTypes = output.allowed_file_types ?? [];
      schema[id] = {
        id,
        variable_name: output.name,
        allowed_types: [{ type: output.type }],
        ...(fileTypes.length > 0 ? { tags: [{ variable_name: 'allowed_file_types', value: fileTypes }] } : {}),
      };
      this.producers.set(output.name, [...(this.producers.get(output.name) ?? []), nodeId]);
    }
    return { schema, variable_addition_allowed: false };
  }
}

function conditionRules(build: StepBuild): ConditionRule[] {
  return (build.rules ?? []).map((rule) => {
    const unary = rule.op === 'exists' || rule.op === 'empty';
    return {
      left: { var: rule.variable },
      op: rule.op,
      ...(unary ? {} : { right: { value: parseJsonText(rule.value ?? 'null') } }),
    };
  });
}

/** Whether a build fills its step (a placeholder otherwise). */
export function isFilled(step: PlanStep, build: StepBuild | undefined): boolean {
  if (!build || build.unresolved !== null) return false;
  switch (step.kind) {
    case 'code':
      return typeof build.source === 'string' && build.source.trim().length > 0;
    case 'condition':
      return (build.rules ?? []).length > 0;
    case 'llm_agent':
      return build.llm !== null;
    case 'integration_action':
      return build.action !== null;
    case 'human_task':
      return build.task !== null;
    case 'call_workflow':
      return build.call !== null;
  }
}

/** Steps that pick a branch: a condition's rules, or a person's decision. */
const routingKinds: ReadonlySet<PlanStep['kind']> = new Set(['condition', 'human_task']);

/** What runs a filled step that produces outputs: its node type, handler class and process. */
function runnerOf(step: PlanStep, build: StepBuild): Pick<WorkflowNode, 'type' | 'handler_class' | 'process'> {
  if (step.kind === 'llm_agent' && build.llm)
    return { type: 'agent', handler_class: 'llm_agent', process: { ...build.llm } };
  if (step.kind === 'integration_action' && build.action)
    return { type: 'action', handler_class: 'integration_action', process: { ...build.action } };
  if (step.kind === 'call_workflow' && build.call)
    return { type: 'subworkflow', handler_class: 'call_workflow', process: { workflow_id: build.call.workflow_id } };
  return { type: 'code', handler_class: 'python_code', process: { source: build.source ?? '' } };
}

/**
 * A human_task node's form and routing: the step's outputs are the fields
 * (all but the decision may be left empty), its first bool output the route
 * (approved or not) the two branches leave by.
 */
function personNode(
  b: Builder,
  nodeId: string,
  step: PlanStep,
  build: StepBuild | undefined,
): {
  fields: Pick<WorkflowNode, 'output_schema' | 'routes' | 'properties'>;
  routeId: string | undefined;
  process?: WorkflowNode['process'];
} {
  const output_schema = b.produce(nodeId, step.outputs);
  const decision = Object.values(output_schema.schema).find((v) => v.allowed_types[0]?.type === 'bool');
  for (const variable of Object.values(output_schema.schema))
    if (variable !== decision) Object.assign(variable, { is_nullable: true, is_optional: true });
  if (!decision) {
    b.problems.push({
      stepId: step.id,
      message: `Human task "${step.name}" needs a bool output for the decision (approved or not)`,
    });
    return { fields: { output_schema }, routeId: undefined };
  }
  const fields = {
    output_schema,
    routes: { [decision.id]: { id: decision.id, name: step.name.slice(0, 255) } },
    properties: [routeProperty],
  };
  const task = build?.task;
  if (!task) return { fields, routeId: decision.id };
  const assignee = task.role ? { type: 'role' as const, role: task.role } : { type: 'workspace' as const };
  return {
    fields,
    routeId: decision.id,
    process: { title: task.title, ...(task.instructions ? { instructions: task.instructions } : {}), assignee },
  };
}

/**
 * The graph of a plan: input node, one node per step (a Python code node, an
 * LLM agent node, an integration action, a sub-workflow call, a condition
 * node or a human task whose route picks the branch), output node. A step reads
 * its inputs from the latest upstream producer of each name. Steps without
 * a usable build become placeholders that fail clearly when run.
 */
export function assembleGraph(seed: string, plan: Plan, builds: Record<string, StepBuild>): AssembledGraph {
  const b = new Builder(seed);
  const inputId = b.id('node:input');
  b.nodes[inputId] = {
    id: inputId,
    name: 'Workflow Input',
    type: 'input',
    handler_class: 'input',
    output_schema: b.produce(inputId, plan.inputs),
  };
  let ends: End[] = [{ nodeId: inputId }];
  const names = new Set<string>();
  if (new Set(plan.steps.map((s) => s.id)).size !== plan.steps.length)
    b.problems.push({ stepId: null, message: 'Step ids must be unique (s1, s2, …)' });
  for (const [i, input] of plan.inputs.entries()) {
    if (plan.inputs.findIndex((other) => other.name === input.name) !== i)
      b.problems.push({ stepId: null, message: `Input ${input.name} is declared twice` });
  }

  for (const step of plan.steps) {
    const nodeId = b.id(`node:${step.id}`);
    b.stepOfNode[nodeId] = step.id;
    // Node names are unique: the engine reports failures by name.
    let name = step.name;
    for (let n = 2; names.has(name); n++) name = `${step.name} (${n})`;
    names.add(name);

    const key = step.branch_of ? `${step.branch_of.condition}:${String(step.branch_of.when)}` : undefined;
    const branchEnd = key ? ends.find((e) => e.branchKey === key) : undefined;
    const branchSource = step.branch_of && plan.steps.find((s) => s.id === step.branch_of?.condition);
    if (step.branch_of && !branchSource) {
      b.problems.push({ stepId: step.id, message: `branch_of names ${step.branch_of.condition}, which is not a step` });
    } else if (branchSource && !routingKinds.has(branchSource.kind)) {
      b.problems.push({
        stepId: step.id,
        message: `branch_of names ${branchSource.id}, a ${branchSource.kind} step: only condition and human_task steps have branches`,
      });
    }
    if (branchEnd) {
      b.connect(branchEnd, nodeId);
      ends = ends.map((e) => (e === branchEnd ? { nodeId, branchKey: key } : e));
    } else {
      for (const end of ends) b.connect(end, nodeId);
      ends = [{ nodeId }];
    }

    const build = builds[step.id];
    const filled = isFilled(step, build);
    const wiring = b.wire(nodeId, step.inputs, step.id, `Step "${step.name}"`);
    const base = { id: nodeId, name, description: step.description.slice(0, 2048), ...wiring };
    if (step.kind === 'condition') {
      const routeId = b.id(`route:${step.id}`);
      const routeVariable = {
        schema: {
          [routeId]: { id: routeId, variable_name: `${step.id}_taken`, allowed_types: [{ type: 'bool' as const }] },
        },
        variable_addition_allowed: false,
      };
      const routing = {
        output_schema: routeVariable,
        routes: { [routeId]: { id: routeId, name: step.name.slice(0, 255) } },
        properties: [routeProperty],
      };
      const rules = filled && build ? conditionRules(build) : [];
      for (const rule of rules) {
        const variable = 'var' in rule.left ? rule.left.var : '';
        if (!step.inputs.includes(variable))
          b.problems.push({
            stepId: step.id,
            message: `Condition rule reads "${variable}", which is not among the step's inputs`,
          });
      }
      b.nodes[nodeId] =
        rules.length > 0
          ? {
              ...base,
              type: 'condition',
              handler_class: 'condition',
              process: { routes: { [routeId]: build?.match === 'any' ? { any: rules } : { all: rules } } },
              ...routing,
            }
          : {
              ...base,
              type: 'code',
              handler_class: 'python_code',
              process: { source: placeholderSource(step, build?.unresolved ?? 'no rules yet') },
              ...routing,
            };
      ends = branchOut(ends, step.id, nodeId, routeId);
    } else if (step.kind === 'human_task') {
      const person = personNode(b, nodeId, step, filled ? build : undefined);
      b.nodes[nodeId] = person.process
        ? { ...base, type: 'human_task', handler_class: 'human_task', process: person.process, ...person.fields }
        : {
            ...base,
            type: 'code',
            handler_class: 'python_code',
            process: { source: placeholderSource(step, build?.unresolved ?? 'not built yet') },
            ...person.fields,
          };
      if (person.routeId) ends = branchOut(ends, step.id, nodeId, person.routeId);
    } else {
      const runner =
        filled && build
          ? runnerOf(step, build)
          : {
              type: 'code',
              handler_class: 'python_code',
              process: { source: placeholderSource(step, build?.unresolved ?? 'not built yet') },
            };
      b.nodes[nodeId] = { ...base, ...runner, output_schema: b.produce(nodeId, step.outputs) };
    }
  }

  const outputId = b.id('node:output');
  b.nodes[outputId] = { id: outputId, name: 'Workflow Output', type: 'output', handler_class: 'output' };
  for (const end of ends) b.connect(end, outputId);
  const wiring = b.wire(
    outputId,
    plan.outputs.map((o) => o.name),
    null,
    'The workflow output',
  );
  // An output made on several branches is mapped from none: the engine then takes it from whichever parent ran.
  for (const id of Object.keys(wiring.variable_mappings ?? {})) {
    const variable = wiring.input_schema?.schema[id]?.variable_name ?? '';
    if ((b.producers.get(variable) ?? []).length > 1) delete wiring.variable_mappings?.[id];
  }
  b.nodes[outputId] = { ...b.nodes[outputId], ...wiring };

  const sampleInputs = Object.fromEntries(plan.inputs.map((input) => [input.name, parseJsonText(input.sample)]));
  return { graph: { nodes: b.nodes, edges: b.edges }, stepOfNode: b.stepOfNode, problems: b.problems, sampleInputs };
}
