import { describe, expect, it } from 'vitest';
import { validateGraph } from '../../src/domain/graph-validation.js';
import { assembleGraph } from '../../src/generation/graph-assembly.js';
import { clausesOf, parseComparison } from '../../src/generation/offline-planner.js';
import { planSchema, stepBuildSchema, type Plan, type StepBuild } from '../../src/domain/generation/plan.js';
import { goodBuilds, goodPlan } from './fake-llm.js';

const plan: Plan = planSchema.parse(goodPlan);
const builds: Record<string, StepBuild> = Object.fromEntries(
  Object.entries(goodBuilds).map(([id, b]) => [id, stepBuildSchema.parse(b)]),
);

describe('plan → graph', () => {
  it('wires a branching plan into a graph the workflow validation accepts', () => {
    const assembled = assembleGraph('seed', plan, builds);
    expect(assembled.problems).toEqual([]);
    expect(validateGraph(assembled.graph)).toEqual([]);
    const condition = Object.values(assembled.graph.nodes).find((n) => n.handler_class === 'condition');
    const routeId = Object.keys(condition?.routes ?? {})[0] ?? '';
    const routeEdges = Object.values(assembled.graph.edges).filter((e) => e.route_id === routeId);
    expect(routeEdges.map((e) => e.route_complement === true).sort()).toEqual([false, true]);
    expect(assembled.sampleInputs).toEqual({ amount: 1500, vendor: '  acme corp ' });
  });

  it('keeps node ids from the skeleton to the final graph and fills unbuilt steps with placeholders that validate', () => {
    const skeleton = assembleGraph('seed', plan, {});
    const final = assembleGraph('seed', plan, builds);
    expect(Object.keys(skeleton.graph.nodes).sort()).toEqual(Object.keys(final.graph.nodes).sort());
    expect(validateGraph(skeleton.graph)).toEqual([]);
    const sources = Object.values(skeleton.graph.nodes)
      .map((n) => n.process?.source)
      .filter((s): s is string => typeof s === 'string');
    expect(sources).toHaveLength(4);
    expect(sources.every((s) => s.includes('NotImplementedError'))).toBe(true);
  });

  it('names the step that reads a variable nobody upstream makes, and duplicated step ids', () => {
    const broken: Plan = {
      ...plan,
      steps: plan.steps.map((s) => (s.id === 's3' ? { ...s, inputs: ['decision'] } : s)),
    };
    expect(assembleGraph('seed', broken, builds).problems).toEqual([
      { stepId: 's3', message: expect.stringContaining('"decision"') as string },
    ]);
    const twice: Plan = { ...plan, steps: [...plan.steps, { ...(plan.steps[0] as Plan['steps'][number]) }] };
    expect(assembleGraph('seed', twice, builds).problems.map((p) => p.message)).toContain(
      'Step ids must be unique (s1, s2, …)',
    );
  });
});

describe('offline planner reading', () => {
  it('reads comparisons', () => {
    expect(parseComparison('If the total is over 1,000')).toEqual({
      variable: 'total',
      op: 'gt',
      value: '1000',
      numeric: true,
    });
    expect(parseComparison('when the message contains refund')).toEqual({
      variable: 'message',
      op: 'contains',
      value: '"refund"',
      numeric: false,
    });
    expect(parseComparison('if the word count is less than 300')).toMatchObject({
      variable: 'word_count',
      op: 'lt',
      value: '300',
    });
    expect(parseComparison('if it feels right')).toBeUndefined();
  });

  it('splits sentences, lists and then-sequences into clauses', () => {
    expect(
      clausesOf('Clean the text, then count the words. If the count is over 5, flag it.\n1. sort the list'),
    ).toEqual(['Clean the text', 'count the words', 'If the count is over 5, flag it', 'sort the list']);
  });
});
