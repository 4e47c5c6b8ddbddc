import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { graphSchema } from '../../src/domain/graph.js';
import { validateGraph } from '../../src/domain/graph-validation.js';
import { processSchemaOf } from '../../src/domain/node-kinds/process-schema.js';
import { nodeKinds } from '../../src/domain/node-kinds/registry.js';
import { compileWorkflow } from '../../src/workflow-files/compile.js';
import { decompileWorkflow } from '../../src/workflow-files/decompile.js';
import { parseWorkflowFile } from '../../src/workflow-files/text.js';
import { fencedBlocks } from './fences.js';

const noCatalog = {
  catalog: {
    code: () => Promise.resolve({ missing: 'no catalog here' }),
    action: () => Promise.resolve({ missing: 'no catalog here' }),
    workflow: () => Promise.resolve({ missing: 'no catalog here' }),
  },
  readFile: () => Promise.reject(new Error('no files here')),
};
const noNames = {
  code: () => Promise.resolve(undefined),
  action: () => Promise.resolve(undefined),
  workflow: () => Promise.resolve(undefined),
};

describe('graph examples in the docs are valid as written', () => {
  it('docs/workflows.md: every JSON graph passes the save checks', () => {
    const graphs = fencedBlocks('docs/workflows.md', 'json').filter((b) => b.includes('"nodes"'));
    expect(graphs.length).toBeGreaterThan(0);
    for (const text of graphs) {
      const parsed = graphSchema.safeParse(JSON.parse(text));
      expect(parsed.error?.issues ?? []).toEqual([]);
      if (parsed.success) expect(validateGraph(parsed.data)).toEqual([]);
    }
  });

  it('docs/*.md: every JSON node shown on its own has a process its kind accepts', () => {
    const nodes = readdirSync(path.join(projectRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .flatMap((f) => fencedBlocks(`docs/${f}`, 'json').map((text) => ({ f, text })))
      .filter(({ text }) => /^\{\s*"type"/.test(text));
    expect(nodes.map(({ f }) => f).sort()).toEqual(['connections.md', 'human-tasks.md']);
    for (const { f, text } of nodes) {
      const node = JSON.parse(text) as { type: string; handler_class: string; process: unknown };
      const kind = nodeKinds.of(node);
      expect(kind, f).toBeDefined();
      if (kind) expect(processSchemaOf(kind).safeParse(node.process).error?.issues ?? [], f).toEqual([]);
    }
  });

  it('docs/workflows-as-code.md: every file compiles to a valid graph and writes back to the same graph', async () => {
    const files = fencedBlocks('docs/workflows-as-code.md', 'yaml');
    expect(files.length).toBeGreaterThanOrEqual(2);
    for (const text of files) {
      const compiled = await compileWorkflow(parseWorkflowFile(text), noCatalog);
      expect(validateGraph(compiled.graph)).toEqual([]);
      const again = await compileWorkflow(await decompileWorkflow(compiled, noNames), noCatalog);
      expect(again.graph).toEqual(compiled.graph);
    }
  });

  it('docs/workflows.md: its JSON example and the first file of workflows-as-code.md are the same workflow', async () => {
    const [file] = fencedBlocks('docs/workflows-as-code.md', 'yaml');
    const compiled = await compileWorkflow(parseWorkflowFile(file ?? ''), noCatalog);
    const [json] = fencedBlocks('docs/workflows.md', 'json').filter((b) => b.includes('"nodes"'));
    const written = await decompileWorkflow(
      { name: 'x', active: true, graph: graphSchema.parse(JSON.parse(json ?? '')) },
      noNames,
    );
    const fromFile = await decompileWorkflow({ ...compiled, name: 'x' }, noNames);
    // Only the ids differ: the JSON example's are its own.
    expect({
      ...written,
      input_id: undefined,
      output_id: undefined,
      nodes: { 'Large?': { ...written.nodes?.['Large?'], id: undefined } },
    }).toEqual({
      ...fromFile,
      input_id: undefined,
      output_id: undefined,
      nodes: { 'Large?': { ...fromFile.nodes?.['Large?'], id: undefined } },
    });
  });
});
