import { DomainError } from '../errors.js';
import {
  discoveryLimits,
  type CustomEdge,
  type ProcessContent,
  type Step,
  type TaggedItem,
} from '../domain/discovery-process.js';
import { parseXml, type XmlElement } from './xml.js';

/**
 * BPMN 2.0 XML → a discovered-process document. The mapping (what is kept,
 * what is dropped and why) is documented in docs/discovery.md; in short:
 * activities → steps, sequence flows → customEdges (contracted through
 * gateways and events), split gateways → branches, lanes → performers and
 * departments, data objects → inputs/outputs, data stores → integrations.
 */

const BPMN_MODEL = 'http://www.omg.org/spec/BPMN/20100524/MODEL';

/** Flow nodes that become steps; everything else on a flow is passed through. */
const activityKinds = new Set([
  'task',
  'userTask',
  'manualTask',
  'serviceTask',
  'scriptTask',
  'businessRuleTask',
  'sendTask',
  'receiveTask',
  'callActivity',
  'subProcess',
  'adHocSubProcess',
  'transaction',
]);
/** How each gateway kind picks among its branches, said on the step the branches leave from. */
const gatewayRules: Record<string, { kind: string; semantics: string }> = {
  exclusiveGateway: { kind: 'Exclusive decision', semantics: 'exactly one branch is taken' },
  parallelGateway: { kind: 'Parallel split', semantics: 'every branch runs' },
  inclusiveGateway: { kind: 'Inclusive decision', semantics: 'one or more branches are taken' },
  eventBasedGateway: { kind: 'Event-based decision', semantics: 'the first event to occur picks the branch' },
  complexGateway: { kind: 'Complex decision', semantics: 'branches are taken by a custom rule' },
};
const gatewayKinds = new Set(Object.keys(gatewayRules));
const eventKinds = new Set([
  'startEvent',
  'endEvent',
  'intermediateCatchEvent',
  'intermediateThrowEvent',
  'boundaryEvent',
]);
/** Process children the mapping reads; the rest are reported as dropped. */
const readKinds = new Set([
  'sequenceFlow',
  'laneSet',
  'dataObjectReference',
  'dataStoreReference',
  'dataObject',
  'documentation',
  'extensionElements',
]);

/** Sequence flows one document may hold: about ten per step at the step limit. */
const maxFlows = 10 * discoveryLimits.steps;
/** Nodes the graph walks may visit in all, so a crafted fan-out cannot make the mapping quadratic. */
const walkBudget = 200_000;

function tooComplex(what: string): DomainError {
  return DomainError.badRequest(`The BPMN process is too large to import: ${what}`);
}

/** Counts graph-walk steps across the whole mapping; throws once the budget is spent. */
function budget(limit: number): () => void {
  let left = limit;
  return () => {
    left -= 1;
    if (left < 0) throw tooComplex('its flows fan out too much');
  };
}

export interface DroppedElement {
  element: string;
  id: string | null;
  name: string | null;
}

export interface BpmnImport {
  content: ProcessContent;
  /** The id of the BPMN process that was imported. */
  bpmnProcessId: string;
  dropped: DroppedElement[];
}

interface Flow {
  id: string;
  source: string;
  target: string;
  name: string | null;
  /** The condition expression's text, when the flow has one. */
  condition: string | null;
}

const bpmnChildren = (element: XmlElement, local?: string) =>
  element.children.filter((child) => child.uri === BPMN_MODEL && (local === undefined || child.local === local));

/** Modellers put line breaks in labels (`&#10;`); a name is one line. */
const oneLine = (value: string | undefined): string | null => {
  const line = value?.replace(/\s+/g, ' ').trim();
  return line ? line : null;
};

function documentation(element: XmlElement): string | null {
  const text = bpmnChildren(element, 'documentation')
    .map((doc) => doc.text.trim())
    .filter(Boolean)
    .join('\n');
  return text || null;
}

const attr = (element: XmlElement, name: string): string | undefined => element.attributes[name];

const dropped = (element: XmlElement): DroppedElement => ({
  element: element.local,
  id: attr(element, 'id') ?? null,
  name: oneLine(attr(element, 'name')),
});

function chooseProcess(definitions: XmlElement, wanted: string | undefined): XmlElement {
  const processes = bpmnChildren(definitions, 'process');
  if (wanted !== undefined) {
    const found = processes.find((process) => attr(process, 'id') === wanted);
    if (!found)
      throw DomainError.badRequest(`The BPMN document has no process ${wanted}`, {
        bpmnProcessIds: processes.map((p) => attr(p, 'id')),
      });
    return found;
  }
  const withActivities = processes.filter((process) =>
    process.children.some((child) => child.uri === BPMN_MODEL && activityKinds.has(child.local)),
  );
  if (withActivities.length === 1 && withActivities[0]) return withActivities[0];
  if (withActivities.length === 0) throw DomainError.badRequest('The BPMN document has no process with a task');
  throw DomainError.badRequest(
    'The BPMN document has several processes with tasks: choose one with the bpmnProcessId query parameter',
    {
      bpmnProcessIds: withActivities.map((p) => attr(p, 'id')),
    },
  );
}

/** Pool name of the process, if a collaboration draws it as a participant. */
function participantName(definitions: XmlElement, processId: string): string | null {
  for (const collaboration of bpmnChildren(definitions, 'collaboration')) {
    const participant = bpmnChildren(collaboration, 'participant').find((p) => attr(p, 'processRef') === processId);
    if (participant) return oneLine(attr(participant, 'name'));
  }
  return null;
}

/** Lanes → for each flow node, its innermost lane (performer) and the lanes around it (departments). */
function laneAssignments(process: XmlElement, pool: string | null, processId: string) {
  const performers = new Map<string, TaggedItem>();
  const departments = new Map<string, TaggedItem[]>();
  const outer: TaggedItem[] = pool ? [{ id: `${processId}-pool`, text: pool }] : [];
  const walk = (laneSet: XmlElement, around: TaggedItem[]) => {
    for (const lane of bpmnChildren(laneSet, 'lane')) {
      const id = attr(lane, 'id') ?? '';
      const item = { id, text: oneLine(attr(lane, 'name')) ?? id };
      for (const ref of bpmnChildren(lane, 'flowNodeRef')) {
        performers.set(ref.text.trim(), item);
        departments.set(ref.text.trim(), around);
      }
      for (const child of bpmnChildren(lane, 'childLaneSet')) walk(child, [...around, item]);
    }
  };
  for (const laneSet of bpmnChildren(process, 'laneSet')) walk(laneSet, outer);
  return {
    performerOf: (nodeId: string) => performers.get(nodeId),
    departmentsOf: (nodeId: string) => departments.get(nodeId) ?? outer,
  };
}

/** A task's data associations: data objects read or written, data stores used. */
function dataOf(activity: XmlElement, dataNames: Map<string, { name: string; store: boolean }>) {
  const inputs: TaggedItem[] = [];
  const outputs: TaggedItem[] = [];
  const integrations: TaggedItem[] = [];
  const add = (list: TaggedItem[], ref: string) => {
    const data = dataNames.get(ref);
    if (!data) return;
    const target = data.store ? integrations : list;
    if (!target.some((item) => item.id === ref)) target.push({ id: ref, text: data.name });
  };
  for (const association of bpmnChildren(activity, 'dataInputAssociation')) {
    for (const ref of bpmnChildren(association, 'sourceRef')) add(inputs, ref.text.trim());
  }
  for (const association of bpmnChildren(activity, 'dataOutputAssociation')) {
    for (const ref of bpmnChildren(association, 'targetRef')) add(outputs, ref.text.trim());
  }
  return { inputs, outputs, integrations };
}

/** Parses and maps; the result still goes through the same validation as a JSON create. */
export function importBpmn(xml: string, options: { bpmnProcessId?: string } = {}): BpmnImport {
  const definitions = parseXml(xml);
  if (definitions.uri !== BPMN_MODEL || definitions.local !== 'definitions') {
    throw DomainError.badRequest(`Not a BPMN 2.0 document: the root must be definitions in ${BPMN_MODEL}`);
  }
  const process = chooseProcess(definitions, options.bpmnProcessId);
  const processId = attr(process, 'id') ?? 'process';
  const pool = participantName(definitions, processId);
  const lanes = laneAssignments(process, pool, processId);
  const report: DroppedElement[] = [];

  const dataNames = new Map<string, { name: string; store: boolean }>();
  const kinds = new Map<string, string>();
  const activities: XmlElement[] = [];
  const gateways = new Map<string, XmlElement>();
  const flows: Flow[] = [];
  for (const child of process.children) {
    if (child.uri !== BPMN_MODEL) continue;
    const id = attr(child, 'id');
    if (id !== undefined) kinds.set(id, child.local);
    if (child.local === 'boundaryEvent' && id !== undefined) {
      // Flows leave a boundary event without one entering it: the activity it is attached to is its source.
      flows.push({
        id,
        source: attr(child, 'attachedToRef') ?? '',
        target: id,
        name: oneLine(attr(child, 'name')),
        condition: null,
      });
    }
    if (activityKinds.has(child.local)) activities.push(child);
    else if (gatewayKinds.has(child.local) && id !== undefined) gateways.set(id, child);
    else if (child.local === 'sequenceFlow') {
      const condition = oneLine(bpmnChildren(child, 'conditionExpression')[0]?.text);
      flows.push({
        id: id ?? '',
        source: attr(child, 'sourceRef') ?? '',
        target: attr(child, 'targetRef') ?? '',
        name: oneLine(attr(child, 'name')),
        condition,
      });
    } else if (child.local === 'dataObjectReference' || child.local === 'dataStoreReference') {
      if (id !== undefined)
        dataNames.set(id, { name: oneLine(attr(child, 'name')) ?? id, store: child.local === 'dataStoreReference' });
    } else if (!readKinds.has(child.local) && !gatewayKinds.has(child.local)) report.push(dropped(child));
  }
  for (const element of bpmnChildren(definitions)) {
    if (element !== process && element.local !== 'collaboration') report.push(dropped(element));
  }
  for (const diagram of definitions.children.filter((child) => child.local === 'BPMNDiagram'))
    report.push(dropped(diagram));
  for (const activity of activities) {
    // A sub-process is one step: what it contains is not flattened into the parent.
    for (const inner of activity.children.filter(
      (child) => child.uri === BPMN_MODEL && (activityKinds.has(child.local) || eventKinds.has(child.local)),
    )) {
      report.push(dropped(inner));
    }
  }

  if (activities.length > discoveryLimits.steps) throw tooComplex(`more than ${discoveryLimits.steps} activities`);
  if (flows.length > maxFlows) throw tooComplex(`more than ${maxFlows} sequence flows`);
  const isStep = (id: string) => activityKinds.has(kinds.get(id) ?? '');
  const outgoing = new Map<string, Flow[]>();
  const incoming = new Map<string, Flow[]>();
  const add = (map: Map<string, Flow[]>, key: string, flow: Flow) => {
    const list = map.get(key);
    if (list) list.push(flow);
    else map.set(key, [flow]);
  };
  for (const flow of flows) {
    add(outgoing, flow.source, flow);
    add(incoming, flow.target, flow);
  }
  const walk = budget(walkBudget);

  /** The steps reached from a flow through gateways and events, each with the last flow name seen. */
  const stepsReached = (start: Flow): Array<{ stepId: string; label: string | null }> => {
    const found = new Map<string, string | null>();
    const seen = new Set<string>();
    const queue: Array<{ flow: Flow; label: string | null }> = [{ flow: start, label: start.name }];
    for (let index = 0; index < queue.length; index++) {
      walk();
      const next = queue[index];
      if (!next) break;
      const target = next.flow.target;
      if (isStep(target)) {
        if (!found.has(target)) found.set(target, next.label);
        continue;
      }
      if (seen.has(target)) continue;
      seen.add(target);
      for (const flow of outgoing.get(target) ?? []) queue.push({ flow, label: flow.name ?? next.label });
    }
    return [...found].map(([stepId, label]) => ({ stepId, label }));
  };

  const edges: CustomEdge[] = [];
  const joined = new Set<string>();
  for (const activity of activities) {
    const sourceId = attr(activity, 'id') ?? '';
    for (const flow of outgoing.get(sourceId) ?? []) {
      for (const reached of stepsReached(flow)) {
        const pair = `${sourceId}\u0000${reached.stepId}`;
        if (joined.has(pair)) continue;
        joined.add(pair);
        if (edges.length === discoveryLimits.edges)
          throw tooComplex(`more than ${discoveryLimits.edges} edges between steps`);
        const direct = flow.target === reached.stepId;
        edges.push({
          id: direct ? flow.id : `${flow.id}:${reached.stepId}`,
          sourceStepId: sourceId,
          targetStepId: reached.stepId,
          ...(reached.label ? { label: reached.label } : {}),
        });
      }
    }
  }

  const { membership: branchOf, rules } = branchesOf(gateways, outgoing, incoming, isStep, walk);
  const order = stepOrder(activities, flows, kinds, outgoing);

  const steps: Step[] = activities.map((activity): Step => {
    const id = attr(activity, 'id') ?? '';
    const performer = lanes.performerOf(id);
    const branch = branchOf.get(id);
    return {
      id,
      name: oneLine(attr(activity, 'name')) ?? id,
      description: documentation(activity),
      stepOrder: order.get(id) ?? null,
      stepType: activity.local,
      status: null,
      owner: null,
      locked: false,
      duration: null,
      durationUnit: null,
      durationRange: null,
      waitingTimeRange: null,
      branchId: branch?.branchId ?? null,
      branchLabel: branch?.label ?? null,
      branchSourceStepId: branch?.sourceStepId ?? null,
      branchRejoinStepId: branch?.rejoinStepId ?? null,
      branchOrder: branch?.order ?? null,
      groupId: null,
      ...dataOf(activity, dataNames),
      rules: rules.get(id) ?? [],
      departments: lanes.departmentsOf(id),
      performers: performer ? [performer] : [],
      painPoints: [],
    };
  });
  steps.sort((a, b) => (a.stepOrder ?? 0) - (b.stepOrder ?? 0));

  return {
    bpmnProcessId: processId,
    dropped: report,
    content: {
      name: oneLine(attr(process, 'name')) ?? pool ?? oneLine(attr(definitions, 'name')) ?? processId,
      description: documentation(process),
      status: null,
      processOrigin: null,
      parentProcessId: null,
      steps,
      customEdges: edges,
      processInputs: [],
      processOutputs: [],
      processIntegrations: [],
      processRules: [],
      milestone: null,
    },
  };
}

interface BranchMembership {
  branchId: string;
  label: string | null;
  sourceStepId: string;
  rejoinStepId: string | null;
  order: number;
}

/**
 * Split gateways (more than one outgoing flow) → branches. Each outgoing flow
 * is a branch (id = the flow's id, label = its name, order = its position)
 * leaving the single step before the gateway. A branch holds the chain of
 * steps along its flow up to a join (a gateway or step with several incoming
 * flows), whose next step is the rejoin step; it ends without a rejoin at an
 * end event or a further split. Splits with no single step before them, and
 * paths with no step on them, make no branch (their edges are still kept).
 */
function branchesOf(
  gateways: Map<string, XmlElement>,
  outgoing: Map<string, Flow[]>,
  incoming: Map<string, Flow[]>,
  isStep: (id: string) => boolean,
  walk: () => void,
): { membership: Map<string, BranchMembership>; rules: Map<string, TaggedItem[]> } {
  const membership = new Map<string, BranchMembership>();
  const rules = new Map<string, TaggedItem[]>();
  const addRule = (stepId: string, rule: TaggedItem) => {
    const list = rules.get(stepId);
    if (list) list.push(rule);
    else rules.set(stepId, [rule]);
  };
  const branchesFrom = new Map<string, number>();
  const single = <T>(list: T[] | undefined): T | undefined => (list?.length === 1 ? list[0] : undefined);

  /** The one step before a node, walking back through single-incoming gateways and events. */
  const stepBefore = (nodeId: string): string | undefined => {
    const seen = new Set<string>();
    for (let node = nodeId; !seen.has(node);) {
      seen.add(node);
      walk();
      const previous: string | undefined = single(incoming.get(node))?.source;
      if (previous === undefined || isStep(previous)) return previous;
      node = previous;
    }
    return undefined;
  };
  /** The first step after a node along single outgoing flows (the rejoin after a join). */
  const stepAfter = (nodeId: string): string | null => {
    const seen = new Set<string>();
    for (let node = nodeId; !seen.has(node);) {
      seen.add(node);
      walk();
      const next: string | undefined = single(outgoing.get(node))?.target;
      if (next === undefined) return null;
      if (isStep(next)) return next;
      node = next;
    }
    return null;
  };

  for (const [gatewayId, gateway] of gateways) {
    const splits = outgoing.get(gatewayId) ?? [];
    if (splits.length < 2) continue;
    const sourceStepId = stepBefore(gatewayId);
    if (sourceStepId === undefined) continue;
    const gatewayName = oneLine(attr(gateway, 'name'));
    const rule = gatewayRules[gateway.local];
    if (rule)
      addRule(sourceStepId, {
        id: gatewayId,
        text: `${rule.kind}${gatewayName ? ` "${gatewayName}"` : ''}: ${rule.semantics}`,
      });
    const defaultFlow = attr(gateway, 'default');
    for (const flow of splits) {
      const members: string[] = [];
      let rejoinStepId: string | null = null;
      const seen = new Set<string>();
      for (let node: string | undefined = flow.target; node !== undefined && !seen.has(node);) {
        seen.add(node);
        walk();
        const joins = (incoming.get(node)?.length ?? 0) > 1;
        if (isStep(node)) {
          if (joins || membership.has(node) || node === sourceStepId) {
            rejoinStepId = node === sourceStepId ? null : node;
            break;
          }
          members.push(node);
        } else if (joins) {
          rejoinStepId = stepAfter(node);
          break;
        }
        node = single(outgoing.get(node))?.target;
      }
      if (members.length === 0) continue;
      // Orders count per source step, so two splits after one step never collide.
      const order = branchesFrom.get(sourceStepId) ?? 0;
      branchesFrom.set(sourceStepId, order + 1);
      for (const stepId of members)
        membership.set(stepId, { branchId: flow.id, label: flow.name, sourceStepId, rejoinStepId, order });
      const condition = flow.id === defaultFlow ? 'no other branch’s condition holds' : flow.condition;
      if (condition !== null && members[0] !== undefined)
        addRule(members[0], { id: flow.id, text: `Taken when ${condition}` });
    }
  }
  return { membership, rules };
}

/** Steps numbered in breadth-first order from the start events; steps no start reaches follow in document order. */
function stepOrder(
  activities: XmlElement[],
  flows: Flow[],
  kinds: Map<string, string>,
  outgoing: Map<string, Flow[]>,
): Map<string, number> {
  const order = new Map<string, number>();
  const activityIds = new Set(activities.map((activity) => attr(activity, 'id') ?? ''));
  const targets = new Set(flows.map((flow) => flow.target));
  const starts = [...kinds]
    .filter(([id, kind]) => kind === 'startEvent' || (activityIds.has(id) && !targets.has(id)))
    .map(([id]) => id);
  const seen = new Set<string>(starts);
  const queue = [...starts];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    if (activityIds.has(node)) order.set(node, order.size + 1);
    for (const flow of outgoing.get(node) ?? []) {
      if (seen.has(flow.target)) continue;
      seen.add(flow.target);
      queue.push(flow.target);
    }
  }
  for (const id of activityIds) if (!order.has(id)) order.set(id, order.size + 1);
  return order;
}
