import { inlineKind } from './kind.js';

/** The workflow's entry: passes the case inputs on, with a declared output_schema only its variables. */
export const inputKind = inlineKind({
  handlerClass: 'input',
  nodeType: 'input',
  describe: "The workflow's entry: its output_schema is the workflow's input schema (jobPayloadSchema).",
  entry: true,
  process: (z) => z.object({}).strict(),
  evaluate({ node, caseInputs }) {
    const declared = node.output_schema?.schema;
    if (!declared || Object.keys(declared).length === 0) return { outputs: { ...caseInputs }, logs: [] };
    const outputs: Record<string, unknown> = {};
    for (const entry of Object.values(declared)) {
      if (Object.hasOwn(caseInputs, entry.variable_name))
        outputs[entry.variable_name] = caseInputs[entry.variable_name];
    }
    return { outputs, logs: [] };
  },
});
