import type { z } from 'zod';
import type { PythonFileInput, PythonFileMarker, PythonLogEntry } from '../../python/types.js';
import { defaultNodeTimeoutMs, type NodeLog } from '../cases.js';
import type { WorkflowNode } from '../graph.js';
import { isValueType, type ValueType } from '../vocabulary.js';
import { activityKind, NodeFailure, type NodeContext, type Zod } from './kind.js';
import type { CodeVersion, NodeServices } from './services.js';

/** {variable name: allowed types}: what the code's main must return. */
type Declared = Record<string, ValueType[]>;

/** The module to run and the outputs it must return (undefined: not checked). */
interface CodeToRun {
  source: string;
  declaredOutputs: Declared | undefined;
}

/** {variableName: allowed types} from a catalog version's outputs: the code's own declaration. */
export function catalogOutputs(version: Pick<CodeVersion, 'outputs'>): Declared {
  const declared: Declared = {};
  for (const field of Object.values(version.outputs))
    declared[field.variableName] = field.allowedTypes.map((t) => t.type);
  return declared;
}

/** {variable_name: allowed types} from the node's output_schema; array_files is an array of file URLs. */
function declaredOutputs(node: WorkflowNode): Declared | undefined {
  const schema = node.output_schema?.schema;
  if (!schema || Object.keys(schema).length === 0) return undefined;
  const declared: Declared = {};
  for (const entry of Object.values(schema)) {
    declared[entry.variable_name] = entry.allowed_types
      .map((t) => (t.type === 'array_files' ? 'array' : t.type))
      .filter(isValueType);
  }
  return declared;
}

/** URLs of the inputs declared as file / array_files, for pre-reading. */
function fileUrls(node: WorkflowNode, inputs: Record<string, unknown>): string[] {
  const urls: string[] = [];
  for (const entry of Object.values(node.input_schema?.schema ?? {})) {
    const types = entry.allowed_types.map((t) => t.type);
    const value = inputs[entry.variable_name];
    if (types.includes('file') && typeof value === 'string') urls.push(value);
    if (types.includes('array_files') && Array.isArray(value))
      urls.push(...value.filter((v): v is string => typeof v === 'string'));
  }
  return urls;
}

function isFileMarker(value: unknown): value is PythonFileMarker {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, '$file');
}

export function toNodeLogs(logs: PythonLogEntry[], stdout: string, stderr: string): NodeLog[] {
  const result: NodeLog[] = logs.map((l) => ({ level: l.level, message: l.message, at: l.at }));
  const at = new Date().toISOString();
  if (stdout.trim()) result.push({ level: 'info', message: `stdout: ${stdout.trimEnd()}`, at });
  if (stderr.trim()) result.push({ level: 'warning', message: `stderr: ${stderr.trimEnd()}`, at });
  return result;
}

/**
 * `process`: inline source, or a code node version of the organization's
 * catalog. Either way the module defines `main(inputs)` and returns a dict
 * keyed by the node's output variable names.
 */
function processSchema(zod: Zod) {
  return zod.union([
    zod.object({ source: zod.string().min(1).max(262_144) }).strict(),
    zod
      .object({
        code_id: zod.uuid(),
        code_version_id: zod.uuid(),
        /** The fingerprint of the workflow file's declaration the version came from (workflow apply); not run. */
        source_sha256: zod
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional(),
      })
      .strict(),
  ]);
}

type PythonCodeContext = NodeContext<z.output<ReturnType<typeof processSchema>>>;

/**
 * Inline source is checked against the node's output_schema; a catalog
 * version against its own declared outputs (the node pins that version,
 * so its declaration is the contract of the code that runs).
 */
async function codeToRun(
  { node, process, organizationId }: PythonCodeContext,
  services: NodeServices,
): Promise<CodeToRun> {
  if ('source' in process) return { source: process.source, declaredOutputs: declaredOutputs(node) };
  const version = await services.codeVersion(organizationId, process.code_id, process.code_version_id);
  if (version === undefined) {
    throw new NodeFailure(`Code node ${process.code_id} has no version ${process.code_version_id}`, {
      kind: 'configuration',
      retryable: false,
    });
  }
  return { source: version.sourceCode, declaredOutputs: catalogOutputs(version) };
}

/**
 * `python_code`: runs the node's module (`main(inputs)`) in the sandboxed
 * runner pool. File inputs are read beforehand (code reads them with
 * `caseflow.read_file(url)`); `$file` outputs are stored as files of the
 * case's workspace and replaced by their URLs.
 */
export const pythonCodeKind = activityKind({
  handlerClass: 'python_code',
  nodeType: 'code',
  describe:
    'Python code: process { source } inline or { code_id, code_version_id } from the catalog; main(inputs) returns the output variables.',
  process: processSchema,
  async run(context, services) {
    const { node, inputs } = context;
    const code = await codeToRun(context, services);
    const files: Record<string, PythonFileInput> = {};
    for (const url of fileUrls(node, inputs)) {
      const file = await services.files.read(url, context);
      files[url] = { name: file.name, contentType: file.contentType, data: file.bytes };
    }
    const result = await services.python.run({
      form: 'main',
      source: code.source,
      inputs,
      declaredOutputs: code.declaredOutputs,
      files: Object.keys(files).length > 0 ? files : undefined,
      timeoutMs: node.execution?.timeout_ms ?? defaultNodeTimeoutMs,
      organizationId: context.organizationId,
      deadline: context.deadline,
      signal: context.signal,
    });
    const logs = toNodeLogs(result.logs, result.stdout, result.stderr);
    if (!result.ok) {
      // Outputs that do not match the declaration will not match on another attempt either.
      const { message, kind, traceback, retryAfterMs } = result.error;
      throw new NodeFailure(message, { kind, logs, traceback, retryAfterMs, retryable: kind !== 'output' });
    }
    const store = (value: unknown) =>
      isFileMarker(value) ? services.files.store(context, fileOf(value.$file)) : value;
    const outputs: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(result.outputs)) {
      outputs[name] = Array.isArray(value) ? await Promise.all(value.map(store)) : await store(value);
    }
    return { outputs, logs };
  },
});

function fileOf(marker: PythonFileMarker['$file']) {
  return { name: marker.name, contentType: marker.contentType, bytes: Buffer.from(marker.base64, 'base64') };
}
