import { requireOrganizationGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { DomainError } from '../errors.js';
import type { CodeNodeRepo } from '../store/code-node-repo.js';
import type { CodeNodeContent, CodeNodeVersion } from '../domain/code-node-records.js';
import type { SourceGates } from './source-gates.js';

/** Any subset of a code node's content; `null` clears description and icon. */
export type CodeNodeChanges = Partial<CodeNodeContent>;

/** Concurrent updates of one code node: how often an update re-reads its base before giving up with 409. */
const UPDATE_ATTEMPTS = 5;

function merge(base: CodeNodeContent, changes: CodeNodeChanges): CodeNodeContent {
  return {
    name: changes.name ?? base.name,
    description: changes.description === undefined ? base.description : changes.description,
    icon: changes.icon === undefined ? base.icon : changes.icon,
    sourceCode: changes.sourceCode ?? base.sourceCode,
    categories: changes.categories ?? base.categories,
    inputs: changes.inputs ?? base.inputs,
    outputs: changes.outputs ?? base.outputs,
    tags: changes.tags ?? base.tags,
    options: changes.options ?? base.options,
    nonEditableFields: changes.nonEditableFields ?? base.nonEditableFields,
  };
}

/**
 * The organization's catalog of Python code nodes: who may author them, the
 * scan every version passes, versions cut on each update.
 */
export class CodeNodeService {
  constructor(
    private readonly repo: CodeNodeRepo,
    private readonly gates: SourceGates,
  ) {}

  /** The contract's first check, before the body is read: organization-scoped key, Code: Full, verified organization. */
  authorize(auth: AuthContext): void {
    requireOrganizationGrant(auth, 'code:full', { verified: true });
  }

  async create(auth: AuthContext, content: CodeNodeContent): Promise<CodeNodeVersion> {
    this.authorize(auth);
    await this.gates.scanOrThrow(content.sourceCode, 'sourceCode', auth.organizationId);
    return this.repo.create(auth.organizationId, auth.userId, content);
  }

  /** Cuts a new version from the latest one; retried while concurrent updates move the latest. */
  async update(auth: AuthContext, codeId: string, changes: CodeNodeChanges): Promise<CodeNodeVersion> {
    this.authorize(auth);
    let scanned: string | undefined;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const latest = await this.repo.findLatest(codeId);
      // Another organization's code node is as absent as an unknown one: its existence is not disclosed.
      if (!latest || latest.organizationId !== auth.organizationId)
        throw DomainError.notFound(`Code node ${codeId} does not exist`);
      const content = merge(latest, changes);
      // Every version must pass the scan under the current policy, including a carried-over source.
      if (scanned !== content.sourceCode) {
        await this.gates.scanOrThrow(content.sourceCode, 'sourceCode', auth.organizationId);
        scanned = content.sourceCode;
      }
      const version = await this.repo.addVersion(codeId, latest.versionNumber, auth.userId, content);
      if (version) return version;
    }
    throw DomainError.conflict('The code node is being updated concurrently; retry');
  }

  /** A version a workflow of this organization may run (`{ code_id, code_version_id }`); undefined otherwise. */
  findRunnableVersion(organizationId: string, codeId: string, versionId: string): Promise<CodeNodeVersion | undefined> {
    return this.repo.findVersionIn(organizationId, codeId, versionId);
  }
}
