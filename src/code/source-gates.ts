import { hasGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { WorkflowGraph } from '../domain/graph.js';
import { DomainError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { PythonPoolBusy, type PythonRunnerPool } from '../python/pool.js';
import type { ScanViolation } from '../python/types.js';

/**
 * The gates authored Python passes before it is stored: catalog code nodes and
 * inline `process.source` in workflows alike.
 */
export class SourceGates {
  constructor(
    private readonly python: PythonRunnerPool,
    private readonly logger: Logger,
  ) {}

  /**
   * The authoring scan of Python source; a violation list means 400 with metadata.violations. The
   * scan queues in the runner pool like every other call: the organization's queue full is a 429, the
   * whole queue full a 503, both with Retry-After.
   */
  async scanOrThrow(source: string, field: string, organizationId?: string): Promise<void> {
    let violations: ScanViolation[];
    try {
      violations = await this.python.scan(source, 'main', organizationId);
    } catch (err) {
      if (err instanceof PythonPoolBusy) {
        const seconds = Math.ceil(err.retryAfterMs / 1000);
        if (err.reason === 'organization') throw DomainError.rateLimited(err.message, seconds);
        throw DomainError.unavailable(err.message, seconds);
      }
      this.logger.error({ err }, 'Python source scan failed to run');
      throw DomainError.unavailable('The Python source scanner is unavailable; retry later', 5);
    }
    if (violations.length > 0) {
      const first = violations[0];
      const where = first ? ` (first at line ${first.line}, col ${first.col}: ${first.message})` : '';
      throw DomainError.badRequest(`${field} failed the security scan with ${violations.length} violation(s)${where}`, {
        violations,
      });
    }
  }

  /**
   * Inline `process.source` in a workflow is authored code like a catalog code node, so it passes the
   * same gates at save: Code: Full, a verified organization, and the scan. Without this, a key with
   * only Workflow: Full would run unscanned code that the catalog route refuses.
   */
  async gateInlineSources(auth: AuthContext, graph: WorkflowGraph): Promise<void> {
    const inline = Object.entries(graph.nodes).flatMap(([id, node]) =>
      typeof node.process?.source === 'string' ? [{ id, source: node.process.source }] : [],
    );
    if (inline.length === 0) return;
    if (!hasGrant(auth, 'code:full'))
      throw DomainError.forbidden('Inline Python source in a workflow needs Code: Full');
    if (!auth.organizationVerified)
      throw DomainError.forbidden('Inline Python source in a workflow needs a verified organization');
    for (const { id, source } of inline)
      await this.scanOrThrow(source, `nodes.${id}.process.source`, auth.organizationId);
  }
}
