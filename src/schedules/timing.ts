import type { ScheduleTiming } from '../domain/schedules.js';
import { DomainError } from '../errors.js';

/**
 * What reads cron expressions (cron-gaps.ts: cron-parser, and luxon under it), loaded by the first cron checked
 * or backfilled, not at start: most processes never read one, and they cost ~1 MB of heap and their load.
 */
const cronReader = () => import('./cron-gaps.js');

/** The timing fields of a request, in the request's units (seconds). */
export interface TimingRequest {
  cron?: string;
  intervalSeconds?: number;
  offsetSeconds?: number;
  timeZone: string;
  startAt?: string;
  endAt?: string;
}

type Problem = { field: string; message: string };

/** Whether the runtime knows the IANA time zone (Temporal reads the same tz database names). */
function knownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

async function cronProblem(cron: string, timeZone: string, minIntervalSeconds: number): Promise<string | undefined> {
  // cron-parser also takes 4 and 6 fields, which Temporal reads differently (its 6th field is the year).
  if (cron.trim().split(/\s+/).length !== 5) return 'expected five fields: minute hour day-of-month month day-of-week';
  const { shortestCronGap } = await cronReader();
  let gap;
  try {
    // Only whether it is under the minimum matters: bounded by it, the check stays cheap for any cron.
    gap = shortestCronGap(cron, timeZone, new Date(), minIntervalSeconds * 1000);
  } catch (err) {
    return `not a valid cron expression: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (gap.ms >= minIntervalSeconds * 1000) return undefined;
  const where = gap.clockChangeAt === undefined ? '' : ` (at the clock change of ${gap.clockChangeAt} in ${timeZone})`;
  return `fires ${gap.ms / 1000} seconds apart${where}: at least ${minIntervalSeconds} seconds between firings (schedules.minIntervalSeconds)`;
}

/**
 * The timing a schedule is stored and created with, checked before anything is created: one of
 * cron and intervalSeconds, a cron of five valid fields, a known time zone, an interval, or a cron
 * whose closest two firings (clock changes included), no shorter than the configured minimum, an
 * offset inside the interval, startAt before endAt. A 400 naming every field at fault otherwise.
 */
export async function checkedTiming(request: TimingRequest, minIntervalSeconds: number): Promise<ScheduleTiming> {
  const problems: Problem[] = [];
  const { cron, intervalSeconds, offsetSeconds, timeZone, startAt, endAt } = request;
  if (!knownTimeZone(timeZone))
    problems.push({ field: 'body.timeZone', message: `unknown IANA time zone ${timeZone}` });
  if ((cron === undefined) === (intervalSeconds === undefined)) {
    problems.push({ field: 'body.cron', message: 'send either cron or intervalSeconds' });
  } else if (cron !== undefined) {
    const problem = knownTimeZone(timeZone) ? await cronProblem(cron, timeZone, minIntervalSeconds) : undefined;
    if (problem) problems.push({ field: 'body.cron', message: problem });
    if (offsetSeconds !== undefined)
      problems.push({ field: 'body.offsetSeconds', message: 'goes with intervalSeconds only' });
  } else if (intervalSeconds !== undefined) {
    if (intervalSeconds < minIntervalSeconds)
      problems.push({ field: 'body.intervalSeconds', message: `at least ${minIntervalSeconds} seconds` });
    if (offsetSeconds !== undefined && offsetSeconds >= intervalSeconds)
      problems.push({ field: 'body.offsetSeconds', message: 'must be less than intervalSeconds' });
  }
  if (startAt !== undefined && endAt !== undefined && Date.parse(startAt) >= Date.parse(endAt))
    problems.push({ field: 'body.endAt', message: 'must be after startAt' });
  if (problems.length > 0) throw DomainError.invalidFields(problems);
  const bounds = {
    timeZone,
    ...(startAt !== undefined ? { startAt: new Date(startAt).toISOString() } : {}),
    ...(endAt !== undefined ? { endAt: new Date(endAt).toISOString() } : {}),
  };
  return cron !== undefined
    ? { ...bounds, cron: cron.trim() }
    : { ...bounds, intervalMs: (intervalSeconds ?? 0) * 1000, offsetMs: (offsetSeconds ?? 0) * 1000 };
}

/** The timing as requests state it, for answers and for merging a PATCH. */
export function timingRequest(timing: ScheduleTiming): TimingRequest {
  return {
    ...(timing.cron !== undefined
      ? { cron: timing.cron }
      : { intervalSeconds: timing.intervalMs / 1000, offsetSeconds: (timing.offsetMs ?? 0) / 1000 }),
    timeZone: timing.timeZone,
    startAt: timing.startAt,
    endAt: timing.endAt,
  };
}

/**
 * How many times the schedule fires from `start` to `end`, both included as Temporal's backfill
 * includes them, counted up to `cap` + 1, so a backfill over its bound is refused before Temporal is asked.
 */
export async function firingsBetween(timing: ScheduleTiming, start: Date, end: Date, cap: number): Promise<number> {
  if (timing.cron === undefined) {
    const offset = timing.offsetMs ?? 0;
    // Temporal's intervals are aligned to the epoch plus the offset.
    const first = Math.ceil((start.getTime() - offset) / timing.intervalMs);
    const last = Math.floor((end.getTime() - offset) / timing.intervalMs);
    return Math.min(Math.max(0, last - first + 1), cap + 1);
  }
  return (await cronReader()).cronFirings(timing.cron, timing.timeZone, start, end, cap);
}
