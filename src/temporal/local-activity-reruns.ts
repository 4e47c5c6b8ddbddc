import type { Info } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, type Registry } from 'prom-client';

/** Local activity executions remembered to recognise a repeat: minutes of traffic, a few MB at most. */
const REMEMBERED = 20_000;

/** What a rerun is: `retry` the activity's own retry policy, `repeat` the same attempt run again. */
type RerunCause = 'retry' | 'repeat';

/**
 * Recognises a local activity that runs again. A retry has an attempt above 1. A repeat is the same
 * activity (run, activity id, attempt) run a second time in this process: its result never reached
 * the history, because the workflow task it ran in timed out or the run was evicted and replayed, so
 * the node's work (its Python call, the end's write and callback POST) is done twice.
 */
export class LocalActivityReruns {
  private readonly seen = new Set<string>();

  /** Why this execution is a rerun, or undefined for a first run (or a regular activity). */
  observe(info: Pick<Info, 'isLocal' | 'attempt' | 'activityId' | 'workflowExecution'>): RerunCause | undefined {
    if (!info.isLocal) return undefined;
    const key = `${info.workflowExecution?.runId ?? ''}/${info.activityId}/${info.attempt}`;
    if (this.seen.has(key)) return 'repeat';
    this.seen.add(key);
    // A Set iterates in insertion order: the oldest goes first.
    const oldest = this.seen.values().next().value;
    if (this.seen.size > REMEMBERED && oldest !== undefined) this.seen.delete(oldest);
    return info.attempt > 1 ? 'retry' : undefined;
  }
}

/** The worker's activity interceptor counting reruns in `caseflow_local_activity_reruns_total`. */
export function countLocalActivityReruns(registry: Registry): ActivityInterceptorsFactory {
  const reruns = new Counter({
    name: 'caseflow_local_activity_reruns_total',
    help: 'Local activities run again, by activity and cause: retry (attempt > 1), repeat (the same attempt again: its workflow task timed out or the run was replayed)',
    labelNames: ['activity', 'cause'] as const,
    registers: [registry],
  });
  const tracker = new LocalActivityReruns();
  return (ctx) => {
    const cause = tracker.observe(ctx.info);
    if (cause) reruns.inc({ activity: ctx.info.activityType, cause });
    return {};
  };
}
