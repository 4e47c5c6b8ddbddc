import { randomUUID } from 'node:crypto';

function variable(name: string, type: string) {
  const id = randomUUID();
  return { [id]: { id, variable_name: name, allowed_types: [{ type }] } };
}

/** The benches' workflow: input (a, b) → Python `main` adding them → output (sum). */
export function pythonAddGraph() {
  const [inputId, codeId, outputId] = [randomUUID(), randomUUID(), randomUUID()];
  const nodes = {
    [inputId]: {
      id: inputId,
      name: 'Workflow Input',
      type: 'input',
      output_schema: { schema: { ...variable('a', 'float'), ...variable('b', 'float') } },
    },
    [codeId]: {
      id: codeId,
      name: 'Add',
      type: 'code',
      handler_class: 'python_code',
      process: { source: 'def main(inputs):\n    return {"sum": inputs["a"] + inputs["b"]}\n' },
      input_schema: { schema: { ...variable('a', 'float'), ...variable('b', 'float') } },
      output_schema: { schema: variable('sum', 'float') },
    },
    [outputId]: {
      id: outputId,
      name: 'Workflow Output',
      type: 'output',
      input_schema: { schema: variable('sum', 'float') },
    },
  };
  const [e1, e2] = [randomUUID(), randomUUID()];
  const edges = {
    [e1]: { id: e1, from_node_id: inputId, to_node_id: codeId },
    [e2]: { id: e2, from_node_id: codeId, to_node_id: outputId },
  };
  return { nodes, edges };
}
