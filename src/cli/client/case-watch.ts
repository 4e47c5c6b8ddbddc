import type { Output } from './output.js';
import { indent, show } from './output.js';
import { exitCodes } from './errors.js';
import type { Session } from './session.js';

const terminal = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
const marks: Record<string, string> = {
  running: '▶',
  completed: '✓',
  failed: '✗',
  skipped: '–',
  cancelled: '■',
};

const seconds = (from: string | null, to: string | null) =>
  from && to ? ` (${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)} s)` : '';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function results(session: Session, caseId: string) {
  return session.call(session.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }));
}

/** The results of a finished case as `name = value` lines. */
export function resultLines(body: { results: Record<string, { value: unknown }> }): string[] {
  return ['results:', ...indent(Object.entries(body.results).map(([k, r]) => `${k} = ${show(r.value)}`))];
}

/**
 * Follows a case until it ends: a line per node as it starts and as it ends, then the results. Returns the
 * final status.
 */
export async function watchCase(session: Session, out: Output, caseId: string, pollMs = 250) {
  const seen = new Map<string, string>();
  for (;;) {
    const audit = await session.call(
      session.client.GET('/api/v1/case/{caseId}/audit', { params: { path: { caseId } } }),
    );
    const nodes = Object.values(audit.audit.nodes_execution_data).sort((a, b) =>
      (a.started_at ?? '~').localeCompare(b.started_at ?? '~'),
    );
    for (const node of nodes) {
      if (node.handler_class === 'input' || node.handler_class === 'output') continue;
      if (seen.get(node.node_id) === node.status || !(node.status in marks)) continue;
      // A node that started and ended between two polls still shows that it ran.
      if (node.status !== 'running' && !seen.has(node.node_id) && node.status !== 'skipped')
        out.progress(`  ${marks.running ?? ''} ${node.node_name}`);
      seen.set(node.node_id, node.status);
      const error = node.error ? `: ${node.error.message}` : '';
      out.progress(
        `  ${marks[node.status] ?? ''} ${node.node_name}${node.status === 'running' ? '' : seconds(node.started_at, node.finished_at)}${error}`,
      );
    }
    if (terminal.has(audit.status)) {
      const status = await session.call(
        session.client.GET('/api/v1/case/{caseId}/status', { params: { path: { caseId } } }),
      );
      return status;
    }
    await sleep(pollMs);
  }
}

/** Waits for the end, prints the nodes as they run and the results; exit code 4 when it did not complete. */
export async function followToEnd(session: Session, out: Output, caseId: string) {
  const final = await watchCase(session, out, caseId);
  const body = await results(session, caseId);
  const values = 'results' in body ? body.results : {};
  out.result({ ...final, results: values }, () => [
    `${final.status}${final.error ? `: ${final.error.message}` : ''}`,
    ...resultLines({ results: values }),
  ]);
  return final.status === 'COMPLETED' ? exitCodes.ok : exitCodes.notCompleted;
}
