import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateGraph } from '../../src/domain/graph-validation.js';
import type { VariableSchemaEntry } from '../../src/domain/variables.js';
import { approvalGraph } from './graphs.js';

const valid = {
  title: 'Approve {{ amount }}',
  instructions: 'Approve a payment of {{ amount }} before {{ deadline }}.',
  assignee: { type: 'workspace' },
  due: { after_ms: 3_600_000 },
  on_due: { action: 'route', route_id: 'approved' },
};

function problems(process: Record<string, unknown>, clearForm = false) {
  const { graph, task } = approvalGraph(process);
  if (clearForm) {
    const node = graph.nodes[task]!;
    node.output_schema = { schema: {}, variable_addition_allowed: false };
    delete node.routes;
    node.properties = [];
    for (const edge of Object.values(graph.edges)) {
      delete edge.route_id;
      delete edge.route_complement;
    }
  }
  return validateGraph(graph).map((p) => [p.path.replace(task, 'T'), p.message]);
}

describe('human_task graph validation', () => {
  it('accepts an approval with a due time, a route on due and instructions naming the inputs', () => {
    expect(problems(valid)).toEqual([]);
    expect(problems({ ...valid, due: { input: 'deadline', offset_ms: -60_000 } })).toEqual([]);
    expect(
      problems({
        ...valid,
        assignee: { type: 'user', user_id: randomUUID() },
        on_due: { action: 'escalate', assignee: { type: 'role', role: 'admin' }, due_after_ms: 60_000 },
      }),
    ).toEqual([]);
  });

  it('refuses a form with no fields, naming the node output_schema', () => {
    expect(problems(valid, true)).toContainEqual([
      'nodes.T.output_schema',
      'A human_task form needs at least one field (output variable)',
    ]);
  });

  it("checks a form field's options: 1 to 20 distinct values of its type, its default among them", () => {
    const withOptions = (value: unknown, extra: Partial<VariableSchemaEntry> = {}) => {
      const { graph, task } = approvalGraph(valid, {}, [
        {
          id: 'level',
          variable_name: 'level',
          allowed_types: [{ type: 'int' }],
          tags: [{ variable_name: 'options', value }],
          ...extra,
        },
      ]);
      return validateGraph(graph).map((p) => [p.path.replace(task, 'T'), p.message]);
    };
    const at = 'nodes.T.output_schema.schema.level.tags';
    expect(withOptions([1, 2, 3], { default: 2 })).toEqual([]);
    expect(withOptions([])).toEqual([[at, 'The options tag needs a list of 1 to 20 values']]);
    expect(withOptions('1,2')).toEqual([[at, 'The options tag needs a list of 1 to 20 values']]);
    expect(withOptions(Array.from({ length: 21 }, (_, i) => i))).toEqual([
      [at, 'The options tag needs a list of 1 to 20 values'],
    ]);
    expect(withOptions([1, 'two'])).toEqual([
      [at, `Option "two" is not a text or number value of the variable's types (int)`],
    ]);
    expect(withOptions([1, 1])).toEqual([[at, 'The options tag lists a value twice']]);
    expect(withOptions([1, 2], { default: 3 })).toEqual([[at, 'The default 3 is not one of the options']]);
  });

  it('refuses unknown assignees, references, routes and due times, each naming its field', () => {
    expect(problems({ ...valid, assignee: { type: 'team', id: 'x' } })[0]?.[0]).toBe('nodes.T.process.assignee.type');
    expect(problems({ ...valid, assignee: { type: 'role', role: 'boss' } })[0]?.[0]).toBe(
      'nodes.T.process.assignee.role',
    );
    expect(problems({ ...valid, assignee: { type: 'user', user_id: 'bob' } })[0]?.[0]).toBe(
      'nodes.T.process.assignee.user_id',
    );
    expect(problems({ ...valid, instructions: 'Pay {{ iban }}' })).toEqual([
      ['nodes.T.process.instructions', '{{ iban }} is not an input of the node'],
    ]);
    expect(problems({ ...valid, on_due: { action: 'route', route_id: 'rejected' } })).toEqual([
      ['nodes.T.process.on_due.route_id', "Route rejected is not declared in the node's routes"],
    ]);
    expect(problems({ ...valid, due: { input: 'amount' } })).toEqual([
      ['nodes.T.process.due.input', 'amount must be of type date only'],
    ]);
    expect(problems({ ...valid, due: undefined })).toEqual([
      ['nodes.T.process.on_due', 'on_due route needs a due time (process.due)'],
    ]);
    // A due time must lie ahead: a duration of at least a minute.
    expect(problems({ ...valid, due: { after_ms: -5 } })[0]?.[0]).toBe('nodes.T.process.due.after_ms');
    expect(problems({ ...valid, title: '' })[0]?.[0]).toBe('nodes.T.process.title');
  });
});
