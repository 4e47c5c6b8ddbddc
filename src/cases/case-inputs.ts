import type { WorkflowGraph } from '../domain/graph.js';
import { isEntryNode } from '../domain/node-kinds/registry.js';
import { typeChecks, variableOptions, type VariableSchema, type VariableSchemaEntry } from '../domain/variables.js';

export interface InputProblem {
  field: string;
  message: string;
}

/** A file URL among the inputs, to be checked against the file store. */
export interface FileInputRef {
  field: string;
  url: string;
  /** The `allowed_file_types` tag (upper-case extensions); empty when any type goes. */
  allowedTypes: string[];
}

export interface ValidatedInputs {
  inputs: Record<string, unknown>;
  problems: InputProblem[];
  files: FileInputRef[];
}

/** A variable schema's entries keyed by variable_name. */
interface NamedVariables {
  entries: Map<string, VariableSchemaEntry>;
  additionAllowed: boolean;
}

function namedVariables(schema: VariableSchema | undefined): NamedVariables {
  const entries = new Map<string, VariableSchemaEntry>();
  for (const entry of Object.values(schema?.schema ?? {})) entries.set(entry.variable_name, entry);
  return { entries, additionAllowed: schema?.variable_addition_allowed ?? false };
}

/** The workflow's input variables keyed by variable_name (the input node's output_schema). */
export function inputVariables(graph: WorkflowGraph): NamedVariables {
  return namedVariables(Object.values(graph.nodes).find(isEntryNode)?.output_schema);
}

function allowedFileTypes(entry: VariableSchemaEntry): string[] {
  const tag = entry.tags?.find((t) => t.variable_name === 'allowed_file_types');
  return Array.isArray(tag?.value) ? tag.value.filter((t): t is string => typeof t === 'string') : [];
}

/**
 * Checks values against the workflow's input schema: known names, types
 * (any of the variable's allowed types), null only where nullable, and,
 * unless `partial` (initialInput at initiation), every required value
 * present. Defaults fill what is optional and missing.
 */
export function validateCaseInputs(
  graph: WorkflowGraph,
  values: Record<string, unknown>,
  options: { partial: boolean; prefix: string },
): ValidatedInputs {
  return validateValues(inputVariables(graph), values, { ...options, noun: inputNoun });
}

/** A completed form (a human task's outputs) against the form's variables, by the same rules as case inputs. */
export function validateFormValues(
  form: VariableSchema,
  values: Record<string, unknown>,
  prefix: string,
): ValidatedInputs {
  return validateValues(namedVariables(form), values, { partial: false, prefix, noun: fieldNoun });
}

const inputNoun = { one: 'an input of this workflow', many: 'inputs' };
const fieldNoun = { one: 'a field of this form', many: 'fields' };

function validateValues(
  { entries, additionAllowed }: NamedVariables,
  values: Record<string, unknown>,
  options: { partial: boolean; prefix: string; noun: { one: string; many: string } },
): ValidatedInputs {
  const problems: InputProblem[] = [];
  const files: FileInputRef[] = [];
  const inputs: Record<string, unknown> = {};
  const field = (name: string) => `${options.prefix}.${name}`;

  for (const [name, value] of Object.entries(values)) {
    const entry = entries.get(name);
    if (!entry) {
      if (additionAllowed) inputs[name] = value;
      else
        problems.push({
          field: field(name),
          message: `is not ${options.noun.one} (${options.noun.many}: ${[...entries.keys()].join(', ') || 'none'})`,
        });
      continue;
    }
    const types = entry.allowed_types.map((t) => t.type);
    if (value === null) {
      if (entry.is_nullable) inputs[name] = null;
      else problems.push({ field: field(name), message: 'may not be null' });
      continue;
    }
    if (!types.some((t) => typeChecks[t](value))) {
      problems.push({ field: field(name), message: `expected ${types.join(' or ')}` });
      continue;
    }
    const choices = variableOptions(entry);
    if (choices && !choices.includes(value)) {
      problems.push({
        field: field(name),
        message: `must be one of ${choices.map((o) => JSON.stringify(o)).join(', ')}`,
      });
      continue;
    }
    inputs[name] = value;
    const allowed = allowedFileTypes(entry);
    if (types.includes('file') && typeof value === 'string')
      files.push({ field: field(name), url: value, allowedTypes: allowed });
    if (types.includes('array_files') && Array.isArray(value)) {
      value.forEach((url, i) =>
        files.push({ field: `${field(name)}.${i}`, url: url as string, allowedTypes: allowed }),
      );
    }
  }
  if (!options.partial) {
    for (const [name, entry] of entries) {
      if (Object.hasOwn(inputs, name) || problems.some((p) => p.field === field(name))) continue;
      if (entry.default !== undefined) inputs[name] = entry.default;
      else if (!entry.is_optional) problems.push({ field: field(name), message: 'is required' });
    }
  }
  return { inputs, problems, files };
}
