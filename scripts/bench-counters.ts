/**
 * The counters that say whether a case's work was done more than once (docs/performance.md, "Overload"),
 * read from the service's /metrics (its own and the Temporal worker's) and the embedded Temporal server's,
 * before and after a level: the difference is what that level's cases cost.
 */

/** One counter (a `_total` suffix or none, either way), summed per value of `by` (or in all). */
interface Wanted {
  name: string;
  by?: string;
  /** Only samples whose label matches. */
  where?: [label: string, pattern: RegExp];
  /** What it means, printed beside it. */
  says: string;
}

const wanted: Wanted[] = [
  { name: 'caseflow_case_run_starts', by: 'start', says: 'case runs started' },
  { name: 'caseflow_cases_finished', by: 'status', says: 'cases ended' },
  { name: 'caseflow_python_calls_shed', by: 'reason', says: 'Python calls that never ran (queue full, deadline)' },
  {
    name: 'temporal_request',
    where: ['operation', /^RespondWorkflowTaskCompleted$/],
    says: 'workflow tasks completed (a heartbeat of a long task is one more)',
  },
  {
    name: 'temporal_request_failure',
    by: 'operation',
    where: ['operation', /WorkflowTask/],
    says: 'workflow task answers refused (a task the server had timed out)',
  },
  { name: 'temporal_workflow_task_execution_failed', by: 'failure_reason', says: 'workflow tasks failed' },
  { name: 'temporal_workflow_task_replay_latency_count', says: 'workflow tasks replayed (cache misses)' },
  { name: 'temporal_local_activity_total', says: 'local activities run' },
  { name: 'temporal_local_activity_execution_failed', says: 'local activities failed (timeouts included)' },
  { name: 'caseflow_local_activity_reruns', by: 'cause', says: 'local activities run again' },
  { name: 'caseflow_callback_first_attempt_misses', by: 'reason', says: 'retry workflows started for a callback' },
  { name: 'workflow_task_attempt_count', says: 'server: workflow tasks handed out' },
  { name: 'workflow_task_attempt_sum', says: 'server: their attempts summed (above the count: tasks handed again)' },
  { name: 'start_to_close_timeout', by: 'operation', says: 'server: start-to-close timeouts' },
  { name: 'schedule_to_start_timeout', by: 'operation', says: 'server: schedule-to-start timeouts' },
  { name: 'workflow_eager_execution_denied', by: 'reason', says: 'server: eager starts refused' },
  { name: 'start_workflow_request_deduped', says: 'server: start requests deduplicated (a retried start)' },
];

/** Counter values by `name[label value]`. */
export type Counters = Map<string, number>;

const sampleLine = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The wanted counters in Prometheus text (several endpoints' texts concatenated). */
export function parseCounters(text: string): Counters {
  const counters: Counters = new Map();
  for (const line of text.split('\n')) {
    const match = sampleLine.exec(line);
    if (!match) continue;
    const name = (match[1] ?? '').replace(/(_total)+$/, '');
    const spec = wanted.find((w) => w.name.replace(/(_total)+$/, '') === name);
    if (!spec) continue;
    const labels = new Map([...(match[2] ?? '').matchAll(labelPair)].map((m) => [m[1] ?? '', m[2] ?? '']));
    if (spec.where && !spec.where[1].test(labels.get(spec.where[0]) ?? '')) continue;
    const key = spec.by ? `${spec.name}[${labels.get(spec.by) ?? ''}]` : spec.name;
    counters.set(key, (counters.get(key) ?? 0) + Number(match[3]));
  }
  return counters;
}

/** The endpoints' counters now; an endpoint that does not answer (an older build's server) adds nothing. */
export async function readCounters(urls: (string | undefined)[]): Promise<Counters> {
  const texts = await Promise.all(
    urls.map((url) =>
      url
        ? fetch(url, { signal: AbortSignal.timeout(10_000) })
            .then((r) => r.text())
            .catch(() => '')
        : Promise.resolve(''),
    ),
  );
  return parseCounters(texts.join('\n'));
}

/** What grew between two readings, one line per counter, with its count per case. */
export function describeGrowth(before: Counters, after: Counters, cases: number): string[] {
  const lines: string[] = [];
  for (const [key, value] of [...after].sort(([a], [b]) => a.localeCompare(b))) {
    const grown = value - (before.get(key) ?? 0);
    if (grown <= 0) continue;
    const says = wanted.find((w) => key === w.name || key.startsWith(`${w.name}[`))?.says ?? '';
    lines.push(`${String(grown).padStart(7)} (${(grown / cases).toFixed(2)}/case)  ${key}: ${says}`);
  }
  return lines;
}

/** The worker's free workflow-task slots now (the SDK's gauge), or undefined when it does not answer. */
export async function freeWorkflowTaskSlots(workerMetricsUrl: string): Promise<number | undefined> {
  const text = await fetch(workerMetricsUrl, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.text())
    .catch(() => '');
  const line = text
    .split('\n')
    .find((l) => l.startsWith('temporal_worker_task_slots_available{') && l.includes('worker_type="WorkflowWorker"'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
