import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { inlineKind } from '../../src/domain/node-kinds/kind.js';
import { processSchemaOf } from '../../src/domain/node-kinds/process-schema.js';
import { isEntryNode, NodeKindRegistry, nodeKinds } from '../../src/domain/node-kinds/registry.js';
import { testBranchKind } from '../support/branch-kind.js';

const kindOf = (handlerClass: string) => {
  const kind = nodeKinds.of({ type: 'any', handler_class: handlerClass });
  if (!kind) throw new Error(`${handlerClass} is not registered`);
  return kind;
};

describe('node kind registry', () => {
  it('holds the built-in kinds with their node types and where they run', () => {
    const builtIn = nodeKinds.all().filter((kind) => kind !== testBranchKind);
    expect(builtIn.map((k) => [k.handlerClass, k.nodeType, k.runs])).toEqual([
      ['input', 'input', 'inline'],
      ['output', 'output', 'inline'],
      ['condition', 'condition', 'inline'],
      ['python_code', 'code', 'activity'],
      ['integration_action', 'action', 'activity'],
      ['llm_agent', 'agent', 'activity'],
      ['human_task', 'human_task', 'waiting'],
      ['call_workflow', 'subworkflow', 'child'],
    ]);
    for (const kind of builtIn) expect(kind.describe.length).toBeGreaterThan(10);
  });

  it('finds a kind by handler_class, else by the node type, and nothing for unknown or inherited names', () => {
    expect(nodeKinds.of({ type: 'code', handler_class: 'python_code' })?.handlerClass).toBe('python_code');
    expect(nodeKinds.of({ type: 'output' })?.handlerClass).toBe('output');
    expect(nodeKinds.of({ type: 'code' })).toBeUndefined();
    for (const name of ['nope', '__proto__', 'constructor', 'toString'])
      expect(nodeKinds.of({ type: 'x', handler_class: name })).toBeUndefined();
  });

  it('marks the input kind as the entry and lets the output kind make the results', () => {
    expect(isEntryNode({ type: 'input' })).toBe(true);
    expect(isEntryNode({ type: 'output' })).toBe(false);
    expect(isEntryNode({ type: 'input', handler_class: 'python_code' })).toBe(false);
    const results = kindOf('output').results;
    const node = {
      id: 'o',
      name: 'out',
      type: 'output',
      input_schema: {
        schema: {
          v: { id: 'v', variable_name: 'total', display_name: 'Total', allowed_types: [{ type: 'float' as const }] },
        },
        variable_addition_allowed: false,
      },
    };
    expect(results?.(node, { total: 3 })).toEqual({ total: { value: 3, type: 'float', displayName: 'Total' } });
    expect(results?.(node, {})).toEqual({ total: { value: null, type: 'float', displayName: 'Total' } });
  });

  it('refuses a second kind with a registered handler_class', () => {
    const registry = new NodeKindRegistry([testBranchKind]);
    expect(() => registry.register(testBranchKind)).toThrow(/registered already/);
    expect(() => nodeKinds.register({ ...testBranchKind, handlerClass: 'python_code' })).toThrow(
      /python_code is registered already/,
    );
  });

  it('builds each process schema once, from zod handed in', () => {
    const code = kindOf('python_code');
    expect(processSchemaOf(code)).toBe(processSchemaOf(code));
    expect(processSchemaOf(code).safeParse({ source: 'x' }).success).toBe(true);
    expect(processSchemaOf(code).safeParse({ code_id: 'not-a-uuid', code_version_id: 'x' }).success).toBe(false);
    expect(processSchemaOf(code).safeParse({ source: 'x', extra: 1 }).success).toBe(false);
    expect(processSchemaOf(kindOf('input')).safeParse({ anything: 1 }).success).toBe(false);
    const condition = processSchemaOf(kindOf('condition'));
    expect(condition.safeParse({ routes: { r: { all: [{ left: { var: 'a' }, op: 'exists' }] } } }).success).toBe(true);
    expect(
      condition.safeParse({ routes: { r: { all: [{ left: { var: 'a' }, op: 'exists', right: { value: 1 } }] } } })
        .success,
    ).toBe(false);
    expect(condition.safeParse({ routes: {} }).success).toBe(false);
  });

  it('hands an inline kind its typed process', () => {
    const node = { id: 'b', name: 'b', type: 'branch', routes: { r: { id: 'r', name: 'r' } } };
    const context = {
      caseId: 'c',
      organizationId: 'o',
      workspaceId: 'w',
      node,
      inputs: { value: 'long text' },
      caseInputs: {},
      attempt: 1,
    };
    expect(testBranchKind.evaluate({ ...context, process: { threshold: 3 } }).outputs).toEqual({ r: true });
    expect(testBranchKind.evaluate({ ...context, process: { threshold: 30 } }).outputs).toEqual({ r: false });
  });

  it('evaluates a condition by its rules into the route outputs', () => {
    const condition = kindOf('condition');
    if (condition.runs !== 'inline') throw new Error('condition runs inline');
    const node = {
      id: 'c',
      name: 'c',
      type: 'condition',
      output_schema: {
        schema: { r: { id: 'r', variable_name: 'big', allowed_types: [{ type: 'bool' as const }] } },
        variable_addition_allowed: false,
      },
    };
    const process = { routes: { r: { all: [{ left: { var: 'n' }, op: 'gt', right: { value: 10 } }] } } };
    const run = (n: number) =>
      condition.evaluate({
        caseId: 'c',
        organizationId: 'o',
        workspaceId: 'w',
        node,
        process,
        inputs: { n },
        caseInputs: {},
        attempt: 1,
      });
    expect(run(11).outputs).toEqual({ big: true });
    expect(run(10).outputs).toEqual({ big: false });
  });

  it('keeps the kinds registered at run time apart from a fresh registry', () => {
    const throwaway = inlineKind({
      handlerClass: 'throwaway',
      nodeType: 'throwaway',
      describe: 'Test only.',
      process: (z) => z.object({}).strict(),
      evaluate: () => ({ outputs: {}, logs: [] }),
    });
    const registry = new NodeKindRegistry([throwaway]);
    expect(registry.of({ type: 'throwaway' })).toBe(throwaway);
    expect(nodeKinds.of({ type: 'throwaway' })).toBeUndefined();
  });
});

describe('docs/extending.md', () => {
  it('lists every built-in kind as the registry describes it', () => {
    const doc = readFileSync(path.join(projectRoot, 'docs', 'extending.md'), 'utf8');
    const table = /<!-- node-kinds:start -->\n([\s\S]*?)<!-- node-kinds:end -->/.exec(doc)?.[1] ?? '';
    const rows = nodeKinds
      .all()
      .filter((kind) => kind !== testBranchKind)
      .map((kind) => `| \`${kind.handlerClass}\` | \`${kind.nodeType}\` | ${kind.runs} | ${kind.describe} |`);
    expect(table).toBe(
      ['| handler_class | node type | runs | what it does |', '|---|---|---|---|', ...rows, ''].join('\n'),
    );
  });
});

describe('workflow bundle', () => {
  // npm run build makes it; the kinds are in it because the workflow asks them where they run.
  const bundle = readFileSync(path.join(projectRoot, 'dist', 'workflow-bundle.js'), 'utf8');

  it('holds the node kinds but neither zod nor the runtime services', () => {
    expect(bundle).toContain('./dist/src/domain/node-kinds/registry.js');
    expect(bundle).toContain('./dist/src/domain/node-kinds/python-code.js');
    expect(bundle).not.toContain('node_modules/zod');
    for (const module of ['src/python/pool.js', 'src/files/', 'src/store/', 'activities/'])
      expect(bundle).not.toContain(`./dist/${module}`);
  });
});
