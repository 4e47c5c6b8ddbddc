import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { graphSchema, type WorkflowGraph } from '../../src/domain/graph.js';
import { validateGraph } from '../../src/domain/graph-validation.js';
import type { CatalogIds, CatalogNames, CodeDeclaration } from '../../src/workflow-files/catalog-names.js';
import { compileWorkflow } from '../../src/workflow-files/compile.js';
import { WorkflowFileError } from '../../src/workflow-files/errors.js';
import { decompileWorkflow } from '../../src/workflow-files/decompile.js';
import { formatWorkflowFile, parseWorkflowFile } from '../../src/workflow-files/text.js';
import { py, textChain } from '../support/graphs.js';

const codeId = randomUUID();
const codeVersionId = randomUUID();
/** What the fake catalog was asked to register: node name → the declaration. */
const registered = new Map<string, CodeDeclaration>();
const connectionId = randomUUID();
const actionVersionId = randomUUID();
const shoutId = randomUUID();

/** A catalog that registers any code node, one connection with one action and one workflow. */
const ids: CatalogIds = {
  code: (node, declaration) => {
    registered.set(node, declaration);
    return Promise.resolve({ found: { codeId, versionId: codeVersionId } });
  },
  action: (connection, action) =>
    Promise.resolve(
      connection !== 'echo'
        ? { missing: `no connection named "${connection}" in the workspace` }
        : action !== 'Echo'
          ? { missing: `connection "echo" has no action "${action}"` }
          : { found: { connectionId, actionVersionId } },
    ),
  workflow: (name) =>
    Promise.resolve(
      name === 'Shout' ? { found: shoutId } : { missing: `no workflow named "${name}" in the workspace` },
    ),
};
const names: CatalogNames = {
  action: (ref) =>
    Promise.resolve(
      ref.connectionId === connectionId && ref.actionVersionId === actionVersionId
        ? { connection: 'echo', action: 'Echo' }
        : undefined,
    ),
  workflow: (id) => Promise.resolve(id === shoutId ? 'Shout' : undefined),
};
const files: Record<string, string> = {
  'greet.py': 'def main(inputs):\n    return {"text": "hi " + inputs["name"]}\n',
};
const options = {
  catalog: ids,
  readFile: (path: string) => {
    const text = files[path];
    return text === undefined ? Promise.reject(new Error('ENOENT')) : Promise.resolve(text);
  },
};

async function compileText(text: string) {
  return compileWorkflow(parseWorkflowFile(text), options);
}

async function roundTrip(text: string) {
  const compiled = await compileText(text);
  const file = await decompileWorkflow({ ...compiled, graph: compiled.graph }, names);
  return { compiled, file, again: await compileWorkflow(file, options) };
}

const hello = `
name: Hello
inputs:
  name: str
nodes:
  greet:
    python: |
      def main(inputs):
          return {"text": "Hello, " + inputs["name"]}
    inputs:
      name: input.name
    outputs:
      text: str
results:
  greeting: greet.text
`;

const routing = `
name: Approve large orders
description: routes on the amount
inputs:
  amount: float
  note: { type: str, optional: true, description: free text }
nodes:
  check:
    condition:
      large: amount > 100
      vip:
        any: ['tier == "gold"', amount >= 1000]
    inputs:
      amount: input.amount
      tier: { value: silver }
  review:
    python_file: greet.py
    inputs:
      name: { value: reviewer }
    outputs:
      text: str
    after:
      - check: large
    execution: { timeout_ms: 5000, max_attempts: 2 }
  pass:
    code: { name: Double, description: doubles, source_file: greet.py }
    inputs:
      count: { value: 2 }
    outputs:
      total: int
    after:
      - check: not large
  ping:
    action: { connection: echo, action: Echo }
    inputs:
      message: { value: hi }
    outputs:
      echoed: str
    after:
      - check: vip
results:
  path: { value: reviewed, type: str }
results_after: [review, pass, ping]
`;

function expectValid(graph: WorkflowGraph) {
  expect(graphSchema.safeParse(graph).success).toBe(true);
  expect(validateGraph(graph)).toEqual([]);
}

describe('workflow files', () => {
  it('compiles names to a valid graph with the same ids every time', async () => {
    const a = await compileText(hello);
    const b = await compileText(hello);
    expect(a.graph).toEqual(b.graph);
    expectValid(a.graph);
    const nodes = Object.values(a.graph.nodes);
    expect(nodes.map((n) => n.name).sort()).toEqual(['Workflow Input', 'Workflow Output', 'greet']);
    const greet = nodes.find((n) => n.name === 'greet')!;
    expect(greet).toMatchObject({ type: 'code', handler_class: 'python_code' });
    const input = nodes.find((n) => n.type === 'input')!;
    const [mapping] = Object.values(greet.variable_mappings ?? {});
    expect(mapping?.from_node_id).toBe(input.id);
    // Mapped variables take the source's type.
    expect(Object.values(greet.input_schema!.schema)[0]?.allowed_types).toEqual([{ type: 'str' }]);
    expect(Object.values(a.graph.edges).map((e) => [e.from_node_id, e.to_node_id])).toEqual([
      [input.id, greet.id],
      [greet.id, nodes.find((n) => n.type === 'output')!.id],
    ]);
  });

  it('compiles routes, files, catalog names and fixed values, and writes the same file back', async () => {
    const { compiled, file, again } = await roundTrip(routing);
    expectValid(compiled.graph);
    const check = Object.values(compiled.graph.nodes).find((n) => n.name === 'check')!;
    const large = Object.values(check.output_schema!.schema).find((v) => v.variable_name === 'large')!;
    expect(check.process).toEqual({
      routes: {
        [large.id]: { all: [{ left: { var: 'amount' }, op: 'gt', right: { value: 100 } }] },
        [Object.keys(check.routes!).find((id) => id !== large.id)!]: {
          any: [
            { left: { var: 'tier' }, op: 'eq', right: { value: 'gold' } },
            { left: { var: 'amount' }, op: 'gte', right: { value: 1000 } },
          ],
        },
      },
    });
    const byName = (n: string) => Object.values(compiled.graph.nodes).find((x) => x.name === n)!;
    expect(byName('review').process).toEqual({ source: files['greet.py'] });
    // A declared code node: its body is the file's source with the node's variables; the node runs the version.
    const declaration = registered.get('pass')!;
    expect(declaration.body).toEqual({
      name: 'Double',
      description: 'doubles',
      sourceCode: files['greet.py'],
      inputs: {
        count: {
          id: '1',
          variableName: 'count',
          displayName: 'count',
          allowedTypes: [{ type: 'int' }],
          isOptional: false,
          isRemovable: true,
        },
      },
      outputs: {
        total: {
          id: '1',
          variableName: 'total',
          displayName: 'total',
          allowedTypes: [{ type: 'int' }],
          isOptional: false,
          isRemovable: true,
        },
      },
    });
    expect(byName('pass').process).toEqual({
      code_id: codeId,
      code_version_id: codeVersionId,
      source_sha256: declaration.sha256,
    });
    expect(byName('ping').process).toEqual({ connection_id: connectionId, action_version_id: actionVersionId });
    const complement = Object.values(compiled.graph.edges).find((e) => e.to_node_id === byName('pass').id)!;
    expect(complement).toMatchObject({ route_id: large.id, route_complement: true });
    // File → graph → file → graph: the graph is the same; the file says the same with the file read inline.
    expect(again.graph).toEqual(compiled.graph);
    expect(file.nodes?.review).toMatchObject({ python: files['greet.py'], after: [{ check: 'large' }] });
    // Export cannot read a code node's source (no GET): it keeps the version's ids and the fingerprint.
    expect(file.nodes?.pass).toMatchObject({
      code: { id: codeId, version_id: codeVersionId, source_sha256: declaration.sha256 },
      after: [{ check: 'not large' }],
    });
    expect(file.nodes?.check?.condition).toEqual({
      large: 'amount > 100',
      vip: { any: ['tier == "gold"', 'amount >= 1000'] },
    });
    expect(file.inputs).toEqual({ amount: 'float', note: { type: 'str', optional: true, description: 'free text' } });
    // The written text parses back to the same file.
    expect(parseWorkflowFile(formatWorkflowFile(file))).toEqual(file);
    expect(parseWorkflowFile(formatWorkflowFile(file, 'json'))).toEqual(file);
  });

  it('writes a graph authored elsewhere (random ids) to a file that keeps its node ids', async () => {
    const graph = textChain('Echo', py('return {"text": inputs["text"]}'));
    const written = await decompileWorkflow({ name: 'Echo', active: true, graph }, names);
    expect(written.nodes?.Echo?.id).toBe(Object.values(graph.nodes).find((n) => n.name === 'Echo')!.id);
    expect(written.input_id).toBe(Object.values(graph.nodes).find((n) => n.type === 'input')!.id);
    const compiled = await compileWorkflow(written, options);
    expectValid(compiled.graph);
    expect(Object.keys(compiled.graph.nodes).sort()).toEqual(Object.keys(graph.nodes).sort());
    // From then on it is a fixed point.
    const rewritten = await decompileWorkflow({ ...compiled }, names);
    expect(rewritten).toEqual(written);
    expect((await compileWorkflow(rewritten, options)).graph).toEqual(compiled.graph);
  });

  it('compiles a sub-workflow call by the callee’s name, latest or pinned, and writes the name back', async () => {
    const calls = `
name: Calls
inputs: { text: str }
nodes:
  latest:
    call: Shout
    inputs: { text: input.text }
    outputs: { loud: str }
  pinned:
    call: { workflow: Shout, version: 2 }
    inputs: { text: latest.loud }
    outputs: { loud: str }
results: { loud: pinned.loud }
`;
    const { compiled, file, again } = await roundTrip(calls);
    expectValid(compiled.graph);
    const byName = (n: string) => Object.values(compiled.graph.nodes).find((x) => x.name === n)!;
    expect(byName('latest')).toMatchObject({
      type: 'subworkflow',
      handler_class: 'call_workflow',
      process: { workflow_id: shoutId },
    });
    expect(byName('pinned').process).toEqual({ workflow_id: shoutId, version_number: 2 });
    expect(file.nodes?.latest?.call).toBe('Shout');
    expect(file.nodes?.pinned?.call).toEqual({ workflow: 'Shout', version: 2 });
    expect(again.graph).toEqual(compiled.graph);
    const missing = await compileText(calls.replace('call: Shout', 'call: Whisper')).catch((e: unknown) => e);
    expect((missing as WorkflowFileError).problems).toEqual([
      'nodes.latest.call: no workflow named "Whisper" in the workspace',
    ]);
  });

  it('names everything that is missing or wrong at once', async () => {
    const text = `
name: Broken
inputs: { a: int }
nodes:
  one:
    code: { name: Triple, source_file: triple.py }
    inputs: { x: input.b, y: nowhere.z }
    outputs: { r: int }
  two:
    action: { connection: mail, action: Send }
    after: [{ one: approved }]
  three:
    python: x
    condition: { r: "r >" }
results: { r: one.r }
`;
    const err = await compileText(text).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFileError);
    // A file with problems registers no code node.
    expect(registered.has('one')).toBe(false);
    expect((err as WorkflowFileError).problems).toEqual([
      'nodes.one.code.source_file: cannot read triple.py: ENOENT',
      'nodes.two.action: no connection named "mail" in the workspace',
      'nodes.three: say what the node runs with exactly one of python, python_file, code, condition, action, agent, call, kind',
      'nodes.one.inputs.x: "input.b": node "input" has no output "b"',
      'nodes.one.inputs.y: "nowhere.z": no node named "nowhere"',
      'nodes.two.after: node "one" has no route "approved"',
    ]);
  });

  it('refuses a malformed file with the path of each problem', () => {
    expect(() => parseWorkflowFile('name: x\nnodes:\n  a.b:\n    python: y\n')).toThrow(/nodes\.a\.b.*"\."/);
    expect(() => parseWorkflowFile('name: x\nnodes: { a: { pyhton: y } }')).toThrow(/nodes\.a.*pyhton/);
    expect(() => parseWorkflowFile('name: [')).toThrow(WorkflowFileError);
    expect(() => parseWorkflowFile('name: a\nname: b')).toThrow(/unique|duplicate/i);
  });
});
