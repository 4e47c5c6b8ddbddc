import { sampleOfType, slug, templateOf } from './offline-planner.js';
import { emptyBuild, placeholderBuild } from '../domain/generation/builds.js';
import type { Plan, PlanInput, PlanStep, PlanVariableType, StepBuild } from '../domain/generation/plan.js';
import { integrationKey } from './process-source.js';
import { personBuild, personOutputs } from './human-steps.js';
import type { IntegrationBinding, ProcessSource, SourceStep } from './process-types.js';

/**
 * The offline planner's plan for a discovered process: deterministic, straight
 * from the process's structure (docs/generation.md, "From a discovered
 * process"). Steps keep their order; a decision's branches become condition
 * steps; a step using an integration the workspace has connected becomes an
 * integration_action step bound to it (its build comes from the binding, see
 * integration-steps.ts). `presets` are the builds decided here (conditions,
 * and steps that need a connection); the other steps go to the builders.
 */
export interface ProcessPlan {
  plan: Plan;
  presets: Record<string, StepBuild>;
  /** What the plan could not keep as the process has it (loops, parallel branches), for the run's task results. */
  notes: string[];
}

type BranchOf = PlanStep['branch_of'];

interface Branch {
  id: string;
  label: string;
  order: number;
  rejoin: string | null;
  steps: SourceStep[];
}

interface Rule {
  variable: string;
  op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte';
  value: unknown;
  type: PlanVariableType;
}

const byOrder = (index: Map<string, number>) => (a: SourceStep, b: SourceStep) =>
  (a.stepOrder ?? Infinity) - (b.stepOrder ?? Infinity) || (index.get(a.id) ?? 0) - (index.get(b.id) ?? 0);

/** A variable name from a process's text ("Invoice record" → invoice_record). */
function variable(text: string): string {
  const name = slug(text);
  return /^[a-z]/.test(name) ? name.slice(0, 63) : `v_${name}`.slice(0, 63);
}

function sampleOf(type: PlanVariableType, name: string): string {
  return JSON.stringify(sampleOfType(type, name));
}

const comparisons: Record<string, Rule['op']> = {
  '==': 'eq',
  '!=': 'ne',
  '>': 'gt',
  '>=': 'gte',
  '<': 'lt',
  '<=': 'lte',
};

/**
 * A branch's condition as the BPMN import writes it ("Taken when ${approved}",
 * "Taken when ${amount > 1000}"); undefined when it is none of these simple forms.
 */
export function parseBranchCondition(text: string): Rule | undefined {
  const body = /^taken when\s+(.+)$/i.exec(text.trim())?.[1]?.trim() ?? '';
  const expression = (/^[$#]\{(.*)\}$/.exec(body)?.[1] ?? body).trim();
  const flag = /^(!|not\s+)?\s*([A-Za-z_]\w*)$/.exec(expression);
  if (flag?.[2]) return { variable: variable(flag[2]), op: 'eq', value: !flag[1], type: 'bool' };
  const m = /^([A-Za-z_]\w*)\s*(==|!=|>=|<=|>|<)\s*(.+)$/.exec(expression);
  const op = comparisons[m?.[2] ?? ''];
  if (!m?.[1] || !m[3] || !op) return undefined;
  const operand = m[3].trim();
  if (/^-?\d+(\.\d+)?$/.test(operand)) return { variable: variable(m[1]), op, value: Number(operand), type: 'float' };
  if (operand === 'true' || operand === 'false')
    return { variable: variable(m[1]), op, value: operand === 'true', type: 'bool' };
  const quoted = /^(['"])(.*)\1$/.exec(operand);
  if (quoted && (op === 'eq' || op === 'ne')) return { variable: variable(m[1]), op, value: quoted[2], type: 'str' };
  return undefined;
}

/** A value for which the rule holds, so the dry run takes the first branch. */
function satisfying(rule: Rule): unknown {
  if (typeof rule.value === 'number') {
    const shift = { gt: 1, gte: 0, lt: -1, lte: 0, eq: 0, ne: 1 }[rule.op];
    return rule.value + shift;
  }
  if (rule.op === 'ne') return typeof rule.value === 'boolean' ? !rule.value : `not ${String(rule.value)}`;
  return rule.value;
}

/** BPMN activities a person carries out: they become human_task steps. */
const personStepTypes: ReadonlySet<string> = new Set(['userTask', 'manualTask']);

const isParallel = (step: SourceStep) => step.rules.some((r) => /^parallel split\b|every branch runs/i.test(r));

class PlanWriter {
  readonly steps: PlanStep[] = [];
  readonly inputs: PlanInput[] = [];
  readonly presets: Record<string, StepBuild> = {};
  readonly notes: string[] = [];
  /** Variable → the branch paths it is produced on ('' = the main line). */
  private readonly produced = new Map<string, string[]>();
  private readonly types = new Map<string, PlanVariableType>();
  /** Process step id → plan step id. */
  readonly planIdOf = new Map<string, string>();
  private readonly bindings: Map<string, IntegrationBinding>;

  constructor(source: ProcessSource) {
    this.bindings = new Map(source.bindings.map((b) => [b.key, b]));
    for (const text of source.process.inputs) this.input(variable(text), 'str', `Process input: ${text}`);
  }

  private input(name: string, type: PlanVariableType, description: string, sample?: unknown): void {
    if (this.inputs.some((i) => i.name === name)) return;
    this.inputs.push({
      name,
      type,
      description: description.slice(0, 500),
      sample: sample === undefined ? sampleOf(type, name) : JSON.stringify(sample),
      allowed_file_types: null,
    });
    this.produce(name, type, '');
  }

  private produce(name: string, type: PlanVariableType, path: string): void {
    this.produced.set(name, [...(this.produced.get(name) ?? []), path]);
    if (!this.types.has(name)) this.types.set(name, type);
  }

  /** Reads a variable on a path: made upstream on that path, else a workflow input. */
  private read(name: string, type: PlanVariableType, path: string, why: string): string {
    const visible = (this.produced.get(name) ?? []).some((p) => path === p || path.startsWith(`${p}/`) || p === '');
    if (!visible) this.input(name, type, why);
    return name;
  }

  typeOf(name: string): PlanVariableType {
    return this.types.get(name) ?? 'str';
  }

  producedNames(): string[] {
    return [...this.produced.keys()].filter((name) => !this.inputs.some((i) => i.name === name));
  }

  private nextId(): string {
    return `s${this.steps.length + 1}`;
  }

  /** One process step: an integration_action step, a step needing a connection, or a code step for the builders. */
  step(step: SourceStep, branch: BranchOf, path: string): void {
    const id = this.nextId();
    this.planIdOf.set(step.id, id);
    const description = [step.name, step.description].filter(Boolean).join(' — ').slice(0, 1000);
    const base = { id, name: step.name.slice(0, 120), description, branch_of: branch };
    if (step.stepType !== null && personStepTypes.has(step.stepType)) {
      this.person(step, base, path);
      return;
    }
    const binding = step.integrations
      .map((item) => this.bindings.get(integrationKey(item.text)))
      .find((b) => b !== undefined);
    if (binding) {
      const { tool } = binding;
      const why = `Input of ${tool.action} (${binding.name})`;
      const outputs = tool.outputs.map(({ name, type }) => ({ name, type }));
      this.steps.push({
        ...base,
        kind: 'integration_action',
        inputs: tool.inputs.map((f) => this.read(f.name, f.type, path, why)),
        outputs,
        integration: binding.key,
      });
      for (const f of outputs) this.produce(f.name, f.type, path);
      return;
    }
    const inputs = step.inputs.map((text) =>
      this.read(variable(text), 'str', path, `Input of "${step.name}": ${text}`),
    );
    const template = templateOf(description);
    const declared = step.outputs.map((text) => variable(text));
    const outputs = (template ? [declared[0] ?? variable(step.name)] : declared).map((name) => ({
      name,
      type: template?.type ?? 'str',
    }));
    this.steps.push({ ...base, kind: 'code', inputs, outputs, integration: null });
    for (const o of outputs) this.produce(o.name, o.type, path);
    const unbound = step.integrations[0];
    if (unbound)
      this.presets[id] = placeholderBuild(
        `it uses ${unbound.text}, and this workspace has no live connection to an integration of that name; connect one and generate again, or write this step`,
      );
  }

  /**
   * A BPMN user task: a human_task step whose form is the decision (its route), the step's declared outputs
   * and a comment; the person sees what the step reads. Built with the plan: no builder runs for it.
   */
  private person(
    step: SourceStep,
    base: Pick<PlanStep, 'id' | 'name' | 'description' | 'branch_of'>,
    path: string,
  ): void {
    const inputs = step.inputs.map((text) =>
      this.read(variable(text), 'str', path, `Shown to the person at "${step.name}": ${text}`),
    );
    const [decision, comment] = personOutputs(step.name);
    const declared = step.outputs
      .map((text) => ({ name: variable(text), type: 'str' as const }))
      .filter((o) => o.name !== decision?.name && o.name !== comment?.name);
    const outputs = [decision, ...declared, comment].filter((o) => o !== undefined);
    const planned: PlanStep = { ...base, kind: 'human_task', inputs, outputs, integration: null };
    this.steps.push(planned);
    for (const o of outputs) this.produce(o.name, o.type, path);
    this.presets[base.id] = personBuild(planned);
  }

  /** A two-way decision on one rule; its branches are the steps that follow with branch_of set. */
  condition(name: string, rule: Rule, branch: BranchOf, path: string): string {
    const id = this.nextId();
    const variableName = this.read(rule.variable, rule.type, path, `Decides "${name}"`);
    const sample = satisfying(rule);
    const input = this.inputs.find((i) => i.name === variableName);
    if (input && input.sample === sampleOf(input.type, input.name)) input.sample = JSON.stringify(sample);
    this.steps.push({
      id,
      name: name.slice(0, 120),
      kind: 'condition',
      description: `${rule.variable} ${rule.op} ${JSON.stringify(rule.value)}`,
      inputs: [variableName],
      outputs: [],
      branch_of: branch,
      integration: null,
    });
    this.presets[id] = {
      ...emptyBuild,
      match: 'all',
      rules: [{ variable: variableName, op: rule.op, value: JSON.stringify(rule.value) }],
    };
    return id;
  }
}

/** Builds the plan; see ProcessPlan. */
export function planFromProcess(source: ProcessSource): ProcessPlan {
  const { process } = source;
  const index = new Map(process.steps.map((s, i) => [s.id, i]));
  const order = byOrder(index);
  const branchesFrom = new Map<string, Branch[]>();
  const branches = new Map<string, Branch>();
  for (const step of process.steps) {
    if (step.branchId === null || step.branchSourceStepId === null) continue;
    let branch = branches.get(step.branchId);
    if (!branch) {
      branch = {
        id: step.branchId,
        label: step.branchLabel ?? step.branchId,
        order: step.branchOrder ?? 0,
        rejoin: step.branchRejoinStepId,
        steps: [],
      };
      branches.set(step.branchId, branch);
      branchesFrom.set(step.branchSourceStepId, [...(branchesFrom.get(step.branchSourceStepId) ?? []), branch]);
    }
    branch.steps.push(step);
  }
  for (const list of branchesFrom.values()) {
    list.sort((a, b) => a.order - b.order);
    for (const branch of list) branch.steps.sort(order);
  }

  const writer = new PlanWriter(source);
  const stepsById = new Map(process.steps.map((s) => [s.id, s]));
  const splitDone = new Set<string>();

  const emitSteps = (steps: SourceStep[], branch: BranchOf, path: string): void => {
    for (const step of steps) writer.step(step, branch, path);
    // A branch that splits again ends there (the branch model is flat): its inner splits follow its steps.
    for (const step of steps) emitSplit(step, branch, path);
  };

  const emitSplit = (from: SourceStep, branch: BranchOf, path: string): void => {
    const list = branchesFrom.get(from.id);
    if (!list || splitDone.has(from.id)) return;
    splitDone.add(from.id);
    if (isParallel(from)) {
      writer.notes.push(
        `The parallel branches after "${from.name}" (${list.map((b) => b.label).join(', ')}) run one after another`,
      );
      for (const b of list) emitSteps(b.steps, branch, path);
      return;
    }
    const rules = list.map((b) => b.steps[0]?.rules.map(parseBranchCondition).find((r) => r !== undefined));
    // The branch taken when no other condition holds goes last (the false side of the last condition).
    const fallback = list.findIndex(
      (b, i) => rules[i] === undefined || /no other branch/i.test(b.steps[0]?.rules.join(' ') ?? ''),
    );
    const ordered = fallback >= 0 ? [...list.filter((_, i) => i !== fallback), list[fallback] as Branch] : list;
    const ruled = fallback >= 0 ? rules.filter((_, i) => i !== fallback) : rules;
    const outcome = `${variable(from.name)}_outcome`.slice(0, 63);
    const byRules = ruled.slice(0, ordered.length - 1).every((r) => r !== undefined);
    if (!byRules)
      writer.notes.push(
        `The decision after "${from.name}" has no condition the planner can read: the workflow input ${outcome} names the branch to take (${ordered.map((b) => JSON.stringify(b.label)).join(', ')})`,
      );
    let side = branch;
    let sidePath = path;
    for (const [i, b] of ordered.entries()) {
      if (i === ordered.length - 1 && i > 0) {
        emitSteps(b.steps, side, sidePath);
        break;
      }
      const rule: Rule = (byRules ? ruled[i] : undefined) ?? {
        variable: outcome,
        op: 'eq',
        value: b.label,
        type: 'str',
      };
      const id = writer.condition(`${from.name}: ${b.label}?`, rule, side, sidePath);
      emitSteps(b.steps, { condition: id, when: true }, `${sidePath}/${id}:true`);
      side = { condition: id, when: false };
      sidePath = `${sidePath}/${id}:false`;
    }
  };

  // The main line in order; splits whose branches rejoin follow their step, splits that end the process come last.
  const mainLine = process.steps.filter((s) => s.branchId === null).sort(order);
  const deferred: SourceStep[] = [];
  for (const step of mainLine) {
    writer.step(step, null, '');
    const list = branchesFrom.get(step.id) ?? [];
    if (list.length > 0 && list.every((b) => b.rejoin !== null)) emitSplit(step, null, '');
    else if (list.length > 0) deferred.push(step);
  }
  for (const step of deferred) emitSplit(step, null, '');
  // Branches leaving a step no split reached (a source on a branch that was never placed): in order, unconditioned.
  for (const step of process.steps) if (!writer.planIdOf.has(step.id)) emitSteps([step], null, '');

  const position = (id: string) => Number(writer.planIdOf.get(id)?.slice(1) ?? 0);
  for (const edge of process.edges) {
    if (position(edge.target) <= position(edge.source)) {
      const from = stepsById.get(edge.source)?.name ?? edge.source;
      const to = stepsById.get(edge.target)?.name ?? edge.target;
      writer.notes.push(`The path from "${from}" back to "${to}" is not kept: a workflow runs without loops`);
    }
  }

  const made = writer.producedNames();
  const wanted = process.outputs.map(variable).filter((name) => made.includes(name));
  const outputs = (wanted.length > 0 ? wanted : made).map((name) => ({ name, type: writer.typeOf(name) }));
  const version = source.ref.versionNumber === null ? 'current state' : `version ${source.ref.versionNumber}`;
  return {
    plan: {
      name: process.name.slice(0, 255),
      description: `Built from the discovered process "${process.name}" (${version}). ${process.description ?? ''}`
        .trim()
        .slice(0, 2048),
      inputs: writer.inputs,
      steps: writer.steps,
      outputs,
    },
    presets: writer.presets,
    notes: writer.notes,
  };
}
