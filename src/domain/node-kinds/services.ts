import type { PythonRunRequest, PythonRunResult } from '../../python/types.js';
import type { TokenUsage } from '../token-usage.js';
import type { ValueType } from '../vocabulary.js';

/**
 * What activity kinds may use, as ports: the worker hands in the
 * implementations (activities/cases.ts), so kind modules stay free of I/O and
 * importable by the workflow bundle. A new kind that needs a new service adds
 * its port here and its wiring there.
 */

/** The case a node runs for: its tenancy decides what the node may read. */
export interface NodeScope {
  caseId: string;
  organizationId: string;
  workspaceId: string;
}

/** A file as a node reads or writes it. */
export interface NodeFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface NodeFiles {
  /** A file the node was given, authorized against the case at use time; a refusal throws NodeFailure (not retried). */
  read(url: string, scope: NodeScope): Promise<NodeFile>;
  /** Stores a file the node produced in the case's workspace and returns its URL; a refused type throws NodeFailure. */
  store(scope: NodeScope, file: NodeFile): Promise<string>;
}

/** What a node needs of a catalog code node version: its source and the outputs it declares (keyed by variableName). */
export interface CodeVersion {
  sourceCode: string;
  outputs: Record<string, { variableName: string; allowedTypes: Array<{ type: ValueType }> }>;
}

export interface NodeServices {
  python: { run(request: PythonRunRequest): Promise<PythonRunResult> };
  files: NodeFiles;
  /** A catalog code node version of the organization; undefined when it has none by these ids. */
  codeVersion(organizationId: string, codeId: string, versionId: string): Promise<CodeVersion | undefined>;
  /**
   * Runs an integration action with a connection of the node's own workspace; the credential is
   * decrypted behind this port and redacted from what comes back. Unusable ids throw NodeFailure.
   */
  integrationAction(scope: NodeScope, request: IntegrationActionRequest): Promise<PythonRunResult>;
  /**
   * One structured chat completion on the operator's LLM (LLM_BASE_URL): the answer is checked
   * against `outputs`. No LLM configured, or a failed call, throws NodeFailure (429 and 5xx retryable).
   */
  llm: LlmPort;
}

export interface LlmPort {
  complete(request: LlmNodeRequest): Promise<LlmNodeAnswer>;
}

/** One field of the structured answer: a node output variable. */
export interface LlmAnswerField {
  name: string;
  types: ValueType[];
  nullable: boolean;
  description?: string;
}

export interface LlmNodeRequest {
  system: string;
  user: string;
  /** Default: the worker's LLM_MODEL. */
  model?: string;
  temperature?: number;
  outputs: LlmAnswerField[];
  timeoutMs: number;
}

export interface LlmNodeAnswer {
  /** Keyed by output variable name, valid against the requested fields. */
  outputs: Record<string, unknown>;
  usage: TokenUsage;
  /** The model that answered (the node's, or the worker's default). */
  model: string;
}

/** One run of a catalog action on a connection: ids only, the credential is resolved behind the port. */
export interface IntegrationActionRequest {
  connectionId: string;
  actionVersionId: string;
  inputs: Record<string, unknown>;
  timeoutMs: number;
  /** The activity attempt's deadline and cancellation, handed on to the Python pool. */
  deadline?: number;
  signal?: AbortSignal;
}
