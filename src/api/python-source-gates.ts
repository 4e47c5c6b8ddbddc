import type { ScanViolation } from '../python/types.js';
import { hasGrant } from '../auth/access.js';
import type { AuthContext } from '../auth/auth-context.js';
import type { AppContext } from '../context.js';
import type { WorkflowGraph } from '../domain/graph.js';
import { DomainError } from '../errors.js';

/** The authoring scan of Python source; a violation list means 400 with metadata.violations. */
export async function scanSourceOrThrow(ctx: Pick<AppContext, 'python' | 'logger'>, source: string, field: string): Promise<void> {
  let violations: ScanViolation[];
  try {
    violations = await ctx.python.scan(source, 'main');
  } catch (err) {
    ctx.logger.error({ err }, 'Python source scan failed to run');
    throw DomainError.unavailable('The Python source scanner is unavailable; retry later', 5);
  }
  if (violations.length > 0) {
    const first = violations[0];
    const where = first ? ` (first at line ${first.line}, col ${first.col}: ${first.message})` : '';
    throw DomainError.badRequest(`${field} failed the security scan with ${violations.length} violation(s)${where}`, { violations });
  }
}

/**
 * Inline `process.source` in a workflow is authored code like a catalog code node, so it passes the
 * same gates at save: Code: Full, a verified organization, and the scan. Without this, a key with
 * only Workflow: Full would run unscanned code that the catalog route refuses.
 */
export async function gateInlineSources(ctx: AppContext, auth: AuthContext, graph: WorkflowGraph): Promise<void> {
  const inline = Object.entries(graph.nodes).flatMap(([id, node]) => (typeof node.process?.source === 'string' ? [{ id, source: node.process.source }] : []));
  if (inline.length === 0) return;
  if (!hasGrant(auth, 'code:full')) throw DomainError.forbidden('Inline Python source in a workflow needs Code: Full');
  if (!auth.organizationVerified) throw DomainError.forbidden('Inline Python source in a workflow needs a verified organization');
  for (const { id, source } of inline) await scanSourceOrThrow(ctx, source, `nodes.${id}.process.source`);
}
