import { describe, expect, it } from 'vitest';
import { CaseScheduler } from '../../src/domain/case-scheduler.js';
import { Graph } from '../support/graphs.js';

const at = '2026-01-01T00:00:00.000Z';
const ending = { deadlinePassed: false, cancelled: false, deadlineMs: 60_000 };

/**
 * Nodes named as given (`in` the input, `out` the output, `name?` a condition `name` with one route, any
 * other name a code node) and chains of edges between them by name.
 */
function bareGraph(names: string[], ...chains: string[][]): Graph {
  const g = new Graph();
  for (const name of names) {
    if (name.endsWith('?'))
      g.condition(name.slice(0, -1), [], `${name}route`, { all: [{ left: { var: 'x' }, op: 'exists' }] });
    else g.bare(name, name === 'in' ? 'input' : name === 'out' ? 'output' : 'code');
  }
  for (const chain of chains) g.chain(...chain);
  return g;
}

function scheduler(g: Graph, inputs: Record<string, unknown> = {}): CaseScheduler {
  return new CaseScheduler({ caseId: 'case-1', graph: g, inputs });
}

/** Runs a node to completion with these outputs; returns the names of the nodes it makes ready. */
function completes(s: CaseScheduler, g: Graph, name: string, outputs: Record<string, unknown> = {}): string[] {
  const id = g.id(name);
  s.begin(id, at);
  s.inputsOf(id);
  s.complete(id, { outputs, logs: [] });
  return names(g, s.settle(id, at));
}

function names(g: Graph, ids: string[]): string[] {
  return ids.map((id) => g.nodes[id]?.name ?? id);
}

function statusOf(s: CaseScheduler, g: Graph, name: string): string | undefined {
  return s.progress().nodes[g.id(name)]?.status;
}

describe('case scheduler', () => {
  it('runs a chain in order, passing outputs on and collecting the output node results', () => {
    const g = bareGraph(['in', 'a', 'out'], ['in', 'a', 'out']);
    const s = scheduler(g, { text: 'hi' });
    expect(names(g, s.start())).toEqual(['in']);
    const input = g.id('in');
    s.begin(input, at);
    expect(s.inputsOf(input)).toEqual({ text: 'hi' });
    s.complete(input, { outputs: { text: 'hi' }, logs: [] });
    expect(names(g, s.settle(input, at))).toEqual(['a']);
    expect(s.progress().remaining).toEqual([g.id('a'), g.id('out')]);

    const a = g.id('a');
    s.begin(a, at);
    expect(s.progress().running).toEqual([a]);
    expect(s.inputsOf(a)).toEqual({ text: 'hi' });
    s.complete(a, { outputs: { text: 'HI' }, logs: [], startedAt: 'activity-start', finishedAt: 'activity-end' });
    expect(names(g, s.settle(a, 'later'))).toEqual(['out']);
    expect(s.progress().nodes[a]).toMatchObject({
      status: 'completed',
      startedAt: 'activity-start',
      finishedAt: 'activity-end',
    });

    expect(completes(s, g, 'out', { text: 'HI' })).toEqual([]);
    expect(s.finish(ending)).toBe('COMPLETED');
    const progress = s.progress();
    expect(progress).toMatchObject({
      status: 'COMPLETED',
      executed: [input, a, g.id('out')],
      failed: [],
      running: [],
      remaining: [],
    });
    expect(progress.results).toEqual({ text: { value: 'HI', type: 'str', displayName: 'text' } });
    expect(progress.error).toBeUndefined();
  });

  it('records each node under its handler class, falling back to the node type', () => {
    const g = bareGraph(['in', 'a'], ['in', 'a']);
    const nodes = scheduler(g).progress().nodes;
    expect(nodes[g.id('in')]?.handlerClass).toBe('input');
    expect(nodes[g.id('a')]?.handlerClass).toBe('python_code');
  });

  it('runs a join only once every parent has settled', () => {
    const g = bareGraph(['in', 'a', 'b', 'join'], ['in', 'a'], ['in', 'b'], ['a', 'join'], ['b', 'join']);
    const s = scheduler(g);
    s.start();
    expect(completes(s, g, 'in')).toEqual(['a', 'b']);
    expect(completes(s, g, 'a')).toEqual([]);
    expect(completes(s, g, 'b')).toEqual(['join']);
  });

  it('takes the true side of a route and skips the other, which then counts as settled', () => {
    const g = bareGraph(['in', 'c?', 'yes', 'no', 'out'], ['in', 'c']);
    g.route('c', 'yes');
    g.route('c', 'no', true);
    g.edge('yes', 'out');
    g.edge('no', 'out');
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    expect(completes(s, g, 'c', { matches: true })).toEqual(['yes']);
    expect(statusOf(s, g, 'no')).toBe('skipped');
    expect(completes(s, g, 'yes')).toEqual(['out']);
  });

  it('takes the complement edge when the route is false', () => {
    const g = bareGraph(['in', 'c?', 'yes', 'no'], ['in', 'c']);
    g.route('c', 'yes');
    g.route('c', 'no', true);
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    expect(completes(s, g, 'c', { matches: false })).toEqual(['no']);
    expect(statusOf(s, g, 'yes')).toBe('skipped');
  });

  it('propagates skipping down a branch until a node with a taken edge', () => {
    const g = bareGraph(['in', 'c?', 'yes', 'after', 'other'], ['in', 'c']);
    g.route('c', 'yes');
    g.edge('yes', 'after');
    g.edge('in', 'other');
    g.edge('other', 'after');
    const s = scheduler(g);
    s.start();
    expect(completes(s, g, 'in')).toEqual(['c', 'other']);
    expect(completes(s, g, 'c', { matches: false })).toEqual([]);
    expect(statusOf(s, g, 'yes')).toBe('skipped');
    // "after" still has a parent to wait for, then runs through its taken edge.
    expect(statusOf(s, g, 'after')).toBe('pending');
    expect(completes(s, g, 'other')).toEqual(['after']);
  });

  it('skips a node whose every incoming edge was not taken, and ends COMPLETED without results', () => {
    const g = bareGraph(['in', 'c?', 'yes', 'out'], ['in', 'c']);
    g.route('c', 'yes');
    g.edge('yes', 'out');
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    expect(completes(s, g, 'c', { matches: false })).toEqual([]);
    expect(statusOf(s, g, 'yes')).toBe('skipped');
    expect(statusOf(s, g, 'out')).toBe('skipped');
    expect(s.finish(ending)).toBe('COMPLETED');
    expect(s.progress().results).toEqual({});
  });

  it('skips a node no edge leads to at the start, and its children follow the other parents', () => {
    const g = bareGraph(['in', 'orphan', 'a'], ['orphan', 'a'], ['in', 'a']);
    const s = scheduler(g);
    expect(names(g, s.start())).toEqual(['in']);
    expect(statusOf(s, g, 'orphan')).toBe('skipped');
    expect(completes(s, g, 'in')).toEqual(['a']);
  });

  it('hands out nothing after a failure, reports the first failure and marks the rest not_executed', () => {
    const g = bareGraph(['in', 'a', 'b', 'c'], ['in', 'a'], ['in', 'b'], ['a', 'c']);
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    const [a, b] = [g.id('a'), g.id('b')];
    s.begin(a, at);
    s.begin(b, at);
    const report = { logs: [{ level: 'error' as const, message: 'boom', at }], startedAt: 'x', finishedAt: 'y' };
    expect(s.fail(a, { message: 'boom', kind: 'error' }, report)).toBe(true);
    expect(s.settle(a, at)).toEqual([]);
    expect(s.fail(b, { message: 'second', kind: 'error' })).toBe(false);
    s.settle(b, at);
    expect(s.finish({ ...ending, cancelled: true })).toBe('FAILED');
    const progress = s.progress();
    expect(progress.error).toEqual({ message: 'Node a failed: boom', nodeId: a });
    expect(progress.failed).toEqual([a, b]);
    expect(progress.nodes[a]).toMatchObject({ status: 'failed', logs: report.logs, startedAt: 'x', finishedAt: 'y' });
    expect(progress.nodes[g.id('c')]?.status).toBe('not_executed');
  });

  it('records a node stopped by the end of the case as cancelled, and the case as CANCELLED', () => {
    const g = bareGraph(['in', 'a', 'b'], ['in', 'a', 'b']);
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    const a = g.id('a');
    s.begin(a, at);
    s.cancel(a);
    expect(s.settle(a, 'end')).toEqual([]);
    expect(s.finish({ ...ending, cancelled: true })).toBe('CANCELLED');
    const progress = s.progress();
    expect(progress.nodes[a]).toMatchObject({ status: 'cancelled', finishedAt: 'end', error: { kind: 'cancelled' } });
    expect(progress.executed).toEqual([g.id('in')]);
    expect(progress.error).toEqual({ message: 'The case was cancelled' });
    expect(progress.nodes[g.id('b')]?.status).toBe('not_executed');
  });

  it('ends TIMED_OUT when the deadline passed, over a cancellation', () => {
    const g = bareGraph(['in', 'a'], ['in', 'a']);
    const s = scheduler(g);
    s.start();
    completes(s, g, 'in');
    expect(s.finish({ deadlinePassed: true, cancelled: true, deadlineMs: 1234 })).toBe('TIMED_OUT');
    expect(s.progress().error).toEqual({ message: 'The case did not finish within its deadline of 1234 ms' });
  });

  it('fails a case without an input node and hands out nothing', () => {
    const g = bareGraph(['a']);
    const s = scheduler(g);
    expect(s.start()).toEqual([]);
    expect(s.finish(ending)).toBe('FAILED');
    expect(s.progress().error).toEqual({ message: 'The workflow has no input node' });
    expect(s.progress().nodes[g.id('a')]?.status).toBe('not_executed');
  });

  it('fails a case whose remaining nodes wait on each other', () => {
    const g = bareGraph(['in', 'a', 'b'], ['in', 'a'], ['b', 'a', 'b']);
    const s = scheduler(g);
    expect(names(g, s.start())).toEqual(['in']);
    expect(completes(s, g, 'in')).toEqual([]);
    expect(s.finish(ending)).toBe('FAILED');
    expect(s.progress().error?.message).toMatch(/can never run: the graph has a cycle/);
  });

  it('counts attempts as the caller reports them', () => {
    const g = bareGraph(['in']);
    const s = scheduler(g);
    s.attempt(g.id('in'), 3);
    expect(s.progress().nodes[g.id('in')]?.attempts).toBe(3);
  });

  it('starts a node no earlier than its upstream nodes finished, and says which clock its times come from', () => {
    // The workflow clock stands at t0 while the local activity of `a` runs from t1 to t2.
    const [t0, t1, t2, t3] = ['00.000', '00.020', '00.050', '00.070'].map((ms) => `2026-01-01T00:00:${ms}Z`) as [
      string,
      string,
      string,
      string,
    ];
    const g = bareGraph(['in', 'a', 'out'], ['in', 'a', 'out']);
    const [input, a, out] = [g.id('in'), g.id('a'), g.id('out')];
    /** in (inline) and a (activity from t1 to t2), the workflow clock reading `clock` when a settles. */
    const upToOutput = (clock: string): CaseScheduler => {
      const s = scheduler(g);
      s.start();
      s.begin(input, t0);
      s.complete(input, { outputs: {}, logs: [] });
      s.settle(input, t0);
      s.begin(a, t0);
      s.complete(a, { outputs: {}, logs: [], startedAt: t1, finishedAt: t2 });
      s.settle(a, clock);
      s.begin(out, clock);
      return s;
    };

    const still = upToOutput(t0);
    still.complete(out, { outputs: {}, logs: [] });
    still.settle(out, t0);
    const nodes = still.progress().nodes;
    expect(nodes[input]).toMatchObject({ startedAt: t0, finishedAt: t0, clock: 'workflow' });
    expect(nodes[a]).toMatchObject({ startedAt: t1, finishedAt: t2, clock: 'activity' });
    expect(nodes[out]).toMatchObject({ startedAt: t2, finishedAt: t2, clock: 'upstream' });

    // Once the workflow clock has moved past the upstream end, it is used as is.
    expect(upToOutput(t3).progress().nodes[out]).toMatchObject({ startedAt: t3, clock: 'workflow' });
  });
});

describe('case scheduler: a rerun reusing recorded outputs', () => {
  it('completes reused nodes without handing them out and runs what follows them', () => {
    const g = bareGraph(['in', 'a', 'b', 'c', 'out'], ['in', 'a', 'b', 'c', 'out']);
    const reused = {
      [g.id('a')]: { from: { caseId: 'original', nodeId: g.id('a') }, outputs: { text: 'A' } },
      [g.id('b')]: { from: { caseId: 'original', nodeId: g.id('b') }, outputs: { text: 'B' } },
    };
    const s = new CaseScheduler({ caseId: 'rerun', graph: g, inputs: { text: 'hi' }, reused });
    expect(names(g, s.start())).toEqual(['in']);
    expect(completes(s, g, 'in', { text: 'hi' })).toEqual(['c']);
    const c = g.id('c');
    s.begin(c, at);
    expect(s.inputsOf(c)).toEqual({ text: 'B' });
    s.complete(c, { outputs: { text: 'C' }, logs: [] });
    expect(names(g, s.settle(c, at))).toEqual(['out']);
    expect(completes(s, g, 'out', { text: 'C' })).toEqual([]);
    expect(s.finish(ending)).toBe('COMPLETED');
    const progress = s.progress();
    expect(progress.executed).toEqual([g.id('in'), c, g.id('out')]);
    expect(progress.nodes[g.id('b')]).toMatchObject({
      status: 'completed',
      outputs: { text: 'B' },
      attempts: 0,
      reused: { caseId: 'original', nodeId: g.id('b') },
    });
    expect(progress.nodes[c]?.reused).toBeUndefined();
  });
});
