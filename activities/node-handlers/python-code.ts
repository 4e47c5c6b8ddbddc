import type { PythonRunnerPool } from '../../src/python/pool.js';
import type { PythonFileInput, PythonFileMarker, PythonLogEntry, PythonValueType } from '../../src/python/types.js';
import { defaultNodeTimeoutMs, type NodeLog } from '../../src/domain/cases.js';
import type { CatalogField } from '../../src/api/schemas/catalog-fields.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { pythonCodeProcessSchema } from '../../src/domain/python-code-schema.js';
import { FileReadRefused, type FileService, type NodeFile } from '../../src/files/file-service.js';
import { OutputTypeError } from '../../src/files/file-types.js';
import { NodeFailure, type NodeHandler, type NodeRunContext, type NodeRunResult } from './types.js';

/** What the handler needs of a catalog code node version (CodeNodeVersion fits). */
export interface CodeVersion {
  sourceCode: string;
  /** The version's declared outputs, keyed by variableName: main's return value is checked against them. */
  outputs: Record<string, Pick<CatalogField, 'variableName' | 'allowedTypes'>>;
}

/** A catalog code node version, when it exists in the organization. */
export type CodeVersionLoader = (organizationId: string, codeId: string, versionId: string) => Promise<CodeVersion | undefined>;

/** The module to run and the outputs it must return (undefined: not checked). */
interface CodeToRun {
  source: string;
  declaredOutputs: Record<string, PythonValueType[]> | undefined;
}

export interface PythonCodeHandlerDeps {
  python: PythonRunnerPool;
  files: FileService;
  loadCodeVersion: CodeVersionLoader;
}

const pythonTypes: ReadonlySet<string> = new Set<PythonValueType>(['str', 'int', 'float', 'bool', 'object', 'array', 'file', 'date', 'json_string', 'binary', 'node']);

function pythonTypesOf(types: string[]): PythonValueType[] {
  return types.filter((t): t is PythonValueType => pythonTypes.has(t));
}

/** {variableName: allowed types} from a catalog version's outputs: the code's own declaration. */
function catalogOutputs(version: CodeVersion): Record<string, PythonValueType[]> {
  const declared: Record<string, PythonValueType[]> = {};
  for (const field of Object.values(version.outputs)) declared[field.variableName] = pythonTypesOf(field.allowedTypes.map((t) => t.type));
  return declared;
}

/** {variable_name: allowed types} from the node's output_schema; array_files is an array of file URLs. */
function declaredOutputs(node: WorkflowNode): Record<string, PythonValueType[]> | undefined {
  const schema = node.output_schema?.schema;
  if (!schema || Object.keys(schema).length === 0) return undefined;
  const declared: Record<string, PythonValueType[]> = {};
  for (const entry of Object.values(schema)) {
    declared[entry.variable_name] = pythonTypesOf(entry.allowed_types.map((t) => (t.type === 'array_files' ? 'array' : t.type)));
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
    if (types.includes('array_files') && Array.isArray(value)) urls.push(...value.filter((v): v is string => typeof v === 'string'));
  }
  return urls;
}

function isFileMarker(value: unknown): value is PythonFileMarker {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, '$file');
}

function toNodeLogs(logs: PythonLogEntry[], stdout: string, stderr: string): NodeLog[] {
  const result: NodeLog[] = logs.map((l) => ({ level: l.level, message: l.message, at: l.at }));
  const at = new Date().toISOString();
  if (stdout.trim()) result.push({ level: 'info', message: `stdout: ${stdout.trimEnd()}`, at });
  if (stderr.trim()) result.push({ level: 'warning', message: `stderr: ${stderr.trimEnd()}`, at });
  return result;
}

/**
 * `python_code`: runs the node's module (`main(inputs)`) in the sandboxed
 * runner pool. File inputs are read beforehand (code reads them with
 * `caseflow.read_file(url)`); `$file` outputs are stored as files of the
 * case's workspace and replaced by their URLs.
 */
export class PythonCodeHandler implements NodeHandler {
  readonly handlerClass = 'python_code';

  constructor(private readonly deps: PythonCodeHandlerDeps) {}

  /**
   * Inline source is checked against the node's output_schema; a catalog
   * version against its own declared outputs (the node pins that version,
   * so its declaration is the contract of the code that runs).
   */
  private async code(context: NodeRunContext): Promise<CodeToRun> {
    const parsed = pythonCodeProcessSchema.safeParse(context.node.process ?? {});
    if (!parsed.success) {
      throw new NodeFailure('python_code process needs { source } or { code_id, code_version_id }', 'configuration', [], undefined, false);
    }
    const process = parsed.data;
    if ('source' in process) return { source: process.source, declaredOutputs: declaredOutputs(context.node) };
    const version = await this.deps.loadCodeVersion(context.organizationId, process.code_id, process.code_version_id);
    if (version === undefined) {
      throw new NodeFailure(`Code node ${process.code_id} has no version ${process.code_version_id}`, 'configuration', [], undefined, false);
    }
    return { source: version.sourceCode, declaredOutputs: catalogOutputs(version) };
  }

  async run(context: NodeRunContext): Promise<NodeRunResult> {
    const { node, inputs } = context;
    const code = await this.code(context);
    const files: Record<string, PythonFileInput> = {};
    for (const url of fileUrls(node, inputs)) {
      const file = await this.readFile(context, url);
      files[url] = { name: file.name, contentType: file.contentType, data: file.bytes };
    }
    const result = await this.deps.python.run({
      form: 'main',
      source: code.source,
      inputs,
      declaredOutputs: code.declaredOutputs,
      files: Object.keys(files).length > 0 ? files : undefined,
      timeoutMs: node.execution?.timeout_ms ?? defaultNodeTimeoutMs,
      organizationId: context.organizationId,
    });
    const logs = toNodeLogs(result.logs, result.stdout, result.stderr);
    if (!result.ok) {
      // Outputs that do not match the declaration will not match on another attempt either.
      throw new NodeFailure(result.error.message, result.error.kind, logs, result.error.traceback, result.error.kind !== 'output');
    }
    const outputs: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(result.outputs)) {
      outputs[name] = Array.isArray(value) ? await Promise.all(value.map((v) => this.storeFile(context, v))) : await this.storeFile(context, value);
    }
    return { outputs, logs };
  }

  /** Authorized against the case at use time; a refusal fails the node without retries. */
  private async readFile(context: NodeRunContext, url: string): Promise<NodeFile> {
    try {
      return await this.deps.files.readForNode(url, { caseId: context.caseId, organizationId: context.organizationId, workspaceId: context.workspaceId });
    } catch (err) {
      if (err instanceof FileReadRefused) throw new NodeFailure(err.message, err.code === 'limit' ? 'limit' : 'input', [], undefined, false);
      throw err;
    }
  }

  private async storeFile(context: NodeRunContext, value: unknown): Promise<unknown> {
    if (!isFileMarker(value)) return value;
    const file = value.$file;
    try {
      return await this.deps.files.storeNodeOutput({
        organizationId: context.organizationId,
        workspaceId: context.workspaceId,
        name: file.name,
        contentType: file.contentType,
        bytes: Buffer.from(file.base64, 'base64'),
      });
    } catch (err) {
      // The same output fails the same way on another attempt.
      if (err instanceof OutputTypeError) throw new NodeFailure(err.message, 'output', [], undefined, false);
      throw err;
    }
  }
}
