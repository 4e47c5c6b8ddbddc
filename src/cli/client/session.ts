import { createClient, type CaseflowClient } from '../../client/index.js';
import { CliError, exitCodes } from './errors.js';
import type { ClientSettings } from './settings.js';

interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A call's success body; never for an operation that answers success without one (202, 204). */
type SuccessBody<R> = Exclude<R extends { data?: infer D } ? D : never, undefined>;

/**
 * What call() and send() take besides the call: nothing more for the calls each is for, and for the
 * other's calls a property no promise has, named for the mistake, so the misuse does not compile
 * (call() on an answer without a body would fail at run time after the service did the work).
 */
export type AnswersBody<R> = [SuccessBody<R>] extends [never]
  ? { 'answers without a body: use send()': never }
  : unknown;
export type AnswersNoBody<R> = [SuccessBody<R>] extends [never]
  ? unknown
  : { 'answers with a body: use call()': never };

interface ErrorBody {
  message?: unknown;
  metadata?: { fields?: unknown; violations?: unknown };
}

/** `field: message` lines from the contract's error body (metadata.fields, metadata.violations). */
function detailLines(body: ErrorBody | undefined): string[] {
  const lines: string[] = [];
  const list = (value: unknown) => (Array.isArray(value) ? (value as unknown[]) : []);
  for (const item of [...list(body?.metadata?.fields), ...list(body?.metadata?.violations)]) {
    if (typeof item !== 'object' || item === null) continue;
    const { field, path, line, col, message } = item as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
    const where = text(field) ?? text(path) ?? (text(line) ? `line ${text(line) ?? ''}:${text(col) ?? ''}` : undefined);
    lines.push(`${where === undefined ? '' : `${where}: `}${text(message) ?? JSON.stringify(message)}`);
  }
  return lines;
}

/** The typed client with the caller's settings, and the look-ups most commands share. */
export class Session {
  readonly client: CaseflowClient;
  private workspace: string | undefined;

  constructor(readonly settings: ClientSettings) {
    this.client = createClient({ baseUrl: settings.url, key: settings.apiKey });
    this.workspace = settings.workspace;
  }

  /** The answer's body, or a CliError carrying the service's message and field list. */
  async call<R extends ApiResult<unknown>>(request: Promise<R> & AnswersBody<R>): Promise<SuccessBody<R>> {
    const { data, response } = await this.answer(request);
    if (data !== undefined) return data as SuccessBody<R>;
    throw new CliError(`the service answered no body (HTTP ${response.status})`, exitCodes.unavailable);
  }

  /** For answers without a body (202, 204): resolves when the service accepted the request. */
  async send<R extends ApiResult<unknown>>(request: Promise<R> & AnswersNoBody<R>): Promise<void> {
    await this.answer(request);
  }

  /** The service's answer when it is a success, else a CliError: unreachable, or its message and fields. */
  private async answer<T>(request: Promise<ApiResult<T>>): Promise<ApiResult<T>> {
    let result: ApiResult<T>;
    try {
      result = await request;
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      const code = (cause as { code?: unknown } | undefined)?.code;
      throw new CliError(
        `cannot reach caseflow at ${this.settings.url} (${typeof code === 'string' ? code : String(cause)}): is it running? (npm start)`,
        exitCodes.unavailable,
      );
    }
    const { error, response } = result;
    if (response.ok) return result;
    const body = error as ErrorBody | undefined;
    const message = typeof body?.message === 'string' ? body.message : response.statusText;
    const code = response.status === 401 || response.status >= 500 ? exitCodes.unavailable : exitCodes.refused;
    throw new CliError(`${message} (HTTP ${response.status})`, code, detailLines(body), error);
  }

  /** The configured workspace, else the key's only one. */
  async workspaceId(): Promise<string> {
    if (this.workspace) return this.workspace;
    const me = await this.call(this.client.GET('/api/v1/me'));
    const [only, ...others] = me.workspaces;
    if (!only || others.length > 0)
      throw new CliError(
        'say which workspace: set CASEFLOW_WORKSPACE (or "workspace" in the config file)',
        exitCodes.usage,
        me.workspaces.map((w) => `${w.id}  ${w.name}`),
      );
    this.workspace = only.id;
    return only.id;
  }

  /** A workflow by id, entity id or exact name (in the workspace when one is set). */
  async findWorkflow(ref: string): Promise<{ workflowId: string; name: string } | undefined> {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref)) {
      const found = await this.call(
        this.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId: ref } } }),
      );
      return { workflowId: found.workflowId, name: found.name };
    }
    const matches = await this.workflowsNamed(ref);
    if (matches.length > 1)
      throw new CliError(
        `${matches.length} workflows are named "${ref}": give its id`,
        exitCodes.refused,
        matches.map((m) => m.workflowId),
      );
    return matches[0];
  }

  /** The workflows of the workspace with exactly this name (the listing reads only the key's own organization). */
  async workflowsNamed(name: string): Promise<{ workflowId: string; name: string }[]> {
    const workspaceId = await this.workspaceId();
    const matches: { workflowId: string; name: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.call(
        this.client.GET('/api/v1/workflow', { params: { query: { name, workspaceId, limit: 100, cursor } } }),
      );
      matches.push(...page.workflows.filter((w) => w.name === name));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return matches;
  }

  /** A workflow's details: its latest version's graph, inputs and results, and its versions. */
  workflowDetails(workflowId: string) {
    return this.call(this.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId } } }));
  }

  async requireWorkflow(ref: string): Promise<{ workflowId: string; name: string }> {
    const found = await this.findWorkflow(ref);
    if (!found) throw new CliError(`no workflow named "${ref}" in workspace ${await this.workspaceId()}`);
    return found;
  }
}
