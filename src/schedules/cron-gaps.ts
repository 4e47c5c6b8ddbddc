import { CronExpression, CronExpressionParser, CronFieldCollection } from 'cron-parser';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
/**
 * How far ahead firing days are looked at: five years hold a leap day (a leap day and the day after
 * fire together at most every four years). A pairing rarer still (a weekday on a given date) may be
 * missed: a pair of close firings once in decades costs nothing worth refusing.
 */
const DAYS_HORIZON_MS = 5 * 366 * DAY_MS;
/** Clock changes are read over two years: they follow yearly rules, but fall on other dates each year. */
const CLOCK_CHANGE_HORIZON_MS = 2 * 366 * DAY_MS;
/** The zone's offset is read once a week: no zone changes its clocks and back within a week. */
const OFFSET_STEP_MS = 7 * DAY_MS;

/** The closest two firings of a cron come: how far apart, and near which clock change when one makes them closer. */
interface CronGap {
  ms: number;
  clockChangeAt?: string;
}

/**
 * The shortest time between two firings of a five-field cron in `timeZone`, as Temporal fires it:
 * by the literal wall clock, so a time a clock change skips does not fire and a time it repeats
 * fires twice. Three places can hold the shortest gap: two firing times of one day (every firing day
 * has the same times), the last of one firing day and the first of the next firing day, and the two
 * firings either side of a clock change (`30 1,3 * * *` fires 1:30 and 3:30, one hour apart where
 * 2:00 jumps to 3:00; `0,59 1 * * *` fires 1:59 and then 1:00 again one minute later where 2:00
 * falls back to 1:00). Days are matched as cron-parser reads them (a day-of-month and a day-of-week
 * both set: either; Temporal: both), which can only find more firings, never miss any. Throws
 * cron-parser's error for an expression it does not read or that never fires. With `below`, a gap
 * across a clock change is looked for only where it would be under `below` (the answer is exact
 * under it, some gap at or over it otherwise): a cron firing once in decades then walks minutes
 * around each change, not those decades (a tenant's request would hold the event loop ~0.1-0.5 s).
 */
export function shortestCronGap(cron: string, timeZone: string, now = new Date(), below = Infinity): CronGap {
  // Parsed in UTC, the expression iterates wall-clock times: no clock change in between.
  const wall = CronExpressionParser.parse(cron, { tz: 'UTC', strict: false });
  // An expression that never fires (February 30th) throws here.
  wall.next();
  const times = dayTimesMs(wall.fields);
  const first = times[0] ?? 0;
  const last = times[times.length - 1] ?? 0;
  let ms = Infinity;
  for (let i = 1; i < times.length; i++) ms = Math.min(ms, (times[i] ?? 0) - (times[i - 1] ?? 0));
  const days = CronExpression.fieldsToExpression(CronFieldCollection.from(wall.fields, { minute: [0], hour: [0] }), {
    tz: 'UTC',
  });
  const dayGap = shortestDayGapMs(days, wallTime(now, timeZone));
  if (dayGap !== undefined) ms = Math.min(ms, dayGap - last + first);
  let gap: CronGap = { ms };
  for (const change of clockChanges(timeZone, now)) {
    const across = gapAcross(cron, change, Math.min(below, gap.ms));
    if (across !== undefined && across < gap.ms) gap = { ms: across, clockChangeAt: new Date(change.at).toISOString() };
  }
  return gap;
}

/** A firing day's times, in ms from midnight, ascending. */
function dayTimesMs(fields: CronFieldCollection): number[] {
  const minutes = fields.minute.values;
  return fields.hour.values.flatMap((h) => minutes.map((m) => (h * 60 + m) * MINUTE_MS)).sort((a, b) => a - b);
}

/** The fewest days between two firing days (in ms, whole days), read from `from` on; undefined when it fires on one day only. */
function shortestDayGapMs(days: CronExpression, from: Date): number | undefined {
  const fires = dayMatcher(days);
  const start = Math.floor(from.getTime() / DAY_MS) * DAY_MS;
  let shortest: number | undefined;
  let previous: number | undefined;
  for (let day = start; day < start + DAYS_HORIZON_MS && shortest !== DAY_MS; day += DAY_MS) {
    if (!fires(new Date(day))) continue;
    if (previous !== undefined) shortest = Math.min(shortest ?? Infinity, day - previous);
    previous = day;
  }
  return shortest;
}

/**
 * Whether the expression fires on a day (a UTC midnight standing for a wall-clock date). Plain
 * fields are matched here, as cron-parser matches them (a day-of-month and a day-of-week both set:
 * either); `L` and `#` forms are left to cron-parser, which is slower (tens of µs a day).
 */
function dayMatcher(days: CronExpression): (day: Date) => boolean {
  const { dayOfMonth, dayOfWeek, month } = days.fields;
  const numbers = (values: readonly (number | string)[]) => values.filter((v): v is number => typeof v === 'number');
  const [dateList, weekdayList] = [numbers(dayOfMonth.values), numbers(dayOfWeek.values)];
  const special =
    dateList.length < dayOfMonth.values.length || weekdayList.length < dayOfWeek.values.length || dayOfWeek.nthDay > 0;
  const months = new Set<number>(month.values);
  const inMonth = (day: Date) => months.has(day.getUTCMonth() + 1);
  // The month first: a cron of one month asks cron-parser about that month's days only.
  if (special) return (day) => inMonth(day) && days.includesDate(day);
  const dates = new Set(dateList);
  const weekdays = new Set(weekdayList.map((d) => d % 7));
  return (day) => {
    if (!inMonth(day)) return false;
    const date = dates.has(day.getUTCDate());
    const weekday = weekdays.has(day.getUTCDay());
    if (!dayOfMonth.isWildcard && !dayOfWeek.isWildcard) return date || weekday;
    return (dayOfMonth.isWildcard || date) && (dayOfWeek.isWildcard || weekday);
  };
}

/** One change of the zone's UTC offset: when (epoch ms), and the offsets before and after it (ms). */
interface ClockChange {
  at: number;
  before: number;
  after: number;
}

/**
 * The two firings either side of a clock change, in real time; undefined when one side has none within
 * `within` of the change (a pair further apart is no closer than the gap already found).
 */
function gapAcross(cron: string, change: ClockChange, within: number): number | undefined {
  const bounded = Number.isFinite(within);
  // Wall times before `at + before` happened before the change; those from `at + after` on, after it.
  const earlier = CronExpressionParser.parse(cron, {
    tz: 'UTC',
    strict: false,
    currentDate: new Date(change.at + change.before),
    ...(bounded ? { startDate: new Date(change.at + change.before - within) } : {}),
  });
  const previous = earlier.hasPrev() ? earlier.prev().getTime() - change.before : undefined;
  const later = CronExpressionParser.parse(cron, {
    tz: 'UTC',
    strict: false,
    currentDate: new Date(change.at + change.after - 1),
    ...(bounded ? { endDate: new Date(change.at + change.after + within) } : {}),
  });
  const next = later.hasNext() ? later.next().getTime() - change.after : undefined;
  return previous === undefined || next === undefined ? undefined : next - previous;
}

/** The zone's offset changes in the coming two years: found week by week, then to the millisecond. */
function clockChanges(timeZone: string, now: Date): ClockChange[] {
  const offset = offsetReader(timeZone);
  const changes: ClockChange[] = [];
  const end = now.getTime() + CLOCK_CHANGE_HORIZON_MS;
  let before = offset(now.getTime());
  for (let step = now.getTime(); step < end; step += OFFSET_STEP_MS) {
    const after = offset(step + OFFSET_STEP_MS);
    if (after !== before) {
      let [low, high] = [step, step + OFFSET_STEP_MS];
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (offset(middle) === before) low = middle;
        else high = middle;
      }
      changes.push({ at: high, before, after });
    }
    before = after;
  }
  return changes;
}

/** The zone's UTC offset at an instant (ms), from the runtime's tz database (Temporal's server reads the same names). */
function offsetReader(timeZone: string): (at: number) => number {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
  return (at) => {
    const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
    const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
    if (!match) return 0;
    const minutes = Number(match[2]) * 60 + Number(match[3]);
    return (match[1] === '-' ? -minutes : minutes) * MINUTE_MS;
  };
}

/** `at` as the zone's wall clock reads it, written as a UTC instant (the frame the wall-clock expression iterates in). */
function wallTime(at: Date, timeZone: string): Date {
  return new Date(at.getTime() + offsetReader(timeZone)(at.getTime()));
}

/** How many times a cron fires from `start` to `end`, both included, counted up to `cap` + 1 (timing.ts). */
export function cronFirings(cron: string, timeZone: string, start: Date, end: Date, cap: number): number {
  const times = CronExpressionParser.parse(cron, {
    tz: timeZone,
    currentDate: new Date(start.getTime() - 1),
    endDate: end,
  });
  let count = 0;
  while (count <= cap && times.hasNext()) {
    times.next();
    count++;
  }
  return count;
}
