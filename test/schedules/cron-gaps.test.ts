import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { shortestCronGap } from '../../src/schedules/cron-gaps.js';
import { checkedTiming } from '../../src/schedules/timing.js';
import { DomainError } from '../../src/errors.js';

/** Mid-January 2026: the next clock changes of New York are 2026-03-08 (2:00 → 3:00) and 2026-11-01 (2:00 → 1:00). */
const january = new Date('2026-01-15T12:00:00Z');
const seconds = (cron: string, timeZone = 'UTC') => shortestCronGap(cron, timeZone, january).ms / 1000;

describe('the shortest gap between two firings of a cron', () => {
  it('reads the times of a firing day', () => {
    expect(seconds('* * * * *')).toBe(60);
    expect(seconds('*/5 * * * *')).toBe(300);
    expect(seconds('0,10 9 * * 1-5')).toBe(600);
    expect(seconds('0 9 * * *')).toBe(86_400);
    expect(seconds('0 9 * * 1')).toBe(7 * 86_400);
  });

  it('reads the last firing of a day and the first of the next firing day', () => {
    // 23:59 → 00:00 the next day.
    expect(seconds('0,59 0,23 * * *')).toBe(60);
    // Only on the 1st: 23:59 and the next 00:00 are a month apart; within the day 0:59 → 23:00 is the shortest.
    expect(seconds('0,59 0,23 1 * *')).toBe(59 * 60);
    // Feb 29 and Mar 1 follow each other in leap years only (2028 here): found years ahead.
    expect(seconds('0,59 0,23 1,29 2,3 *')).toBe(60);
  });

  it('counts clock changes as Temporal fires them: skipped times do not fire, repeated ones fire twice', () => {
    // 1:30 EST, then 3:30 EDT one real hour later, where 2:00 jumps to 3:00.
    expect(shortestCronGap('30 1,3 * * *', 'America/New_York', january)).toEqual({
      ms: 3_600_000,
      clockChangeAt: '2026-03-08T07:00:00.000Z',
    });
    // 1:59 EDT, then 1:00 EST one minute later, where 2:00 falls back to 1:00.
    expect(shortestCronGap('0,59 1 * * *', 'America/New_York', january)).toEqual({
      ms: 60_000,
      clockChangeAt: '2026-11-01T06:00:00.000Z',
    });
    // A daily 1:30 fires twice on the day 1:30 comes twice.
    expect(seconds('30 1 * * *', 'America/New_York')).toBe(3600);
    // Without clock changes the same crons keep their wall-clock gaps.
    expect(seconds('30 1,3 * * *', 'Asia/Tokyo')).toBe(7200);
    expect(seconds('30 1 * * *', 'Asia/Tokyo')).toBe(86_400);
  });
});

describe('the shortest gap under a bound (what the minimum asks)', () => {
  it('is exact under the bound, and only at or over it otherwise', () => {
    // Sunday 1:30, which comes twice on 2026-11-01 in New York: one real hour apart there, a week elsewhere.
    const sunday = (below: number) => shortestCronGap('30 1 * * 0', 'America/New_York', january, below).ms / 1000;
    expect(sunday(Infinity)).toBe(3600);
    expect(sunday(2 * 3600_000)).toBe(3600);
    expect(sunday(1800_000)).toBeGreaterThanOrEqual(1800);
    // A cron firing once in years (a fifth Sunday of February) keeps the minimum wherever its clocks change.
    for (const zone of ['Europe/Berlin', 'Africa/Casablanca', 'Australia/Lord_Howe'])
      expect(shortestCronGap('0 0 * 2 0#5', zone, january, 60_000).ms).toBeGreaterThanOrEqual(60_000);
  });
});

describe('the shortest gap, against cron-parser walking the firings one by one', () => {
  /** The shortest gap among the firings of the coming two years (at most 3000), in UTC. */
  const walked = (cron: string): number => {
    const times = CronExpressionParser.parse(cron, {
      tz: 'UTC',
      currentDate: january,
      endDate: new Date(january.getTime() + 2 * 366 * 86_400_000),
    });
    let shortest = Infinity;
    let previous: number | undefined;
    for (let read = 0; read < 3000 && times.hasNext(); read++) {
      const at = times.next().getTime();
      if (previous !== undefined) shortest = Math.min(shortest, at - previous);
      previous = at;
    }
    return shortest;
  };

  it.each([
    '0 0,23 13 * 5', // the 13th or a Friday
    '30 22,23 * * 0,1', // Sunday and Monday
    '0 0,23 * * 7', // Sunday written 7
    '15,45 0,23 L * *', // the last day of each month
    '0 0,23 * * 5L', // the last Friday of each month
    '0 0,23 * * 1#2', // the second Monday
    '0 12 1-7 * 1', // the first week or a Monday
    '5 4 * 2-3 *', // February and March
  ])('%s', (cron) => {
    expect(seconds(cron)).toBe(walked(cron) / 1000);
  });
});

describe('a cron under schedules.minIntervalSeconds', () => {
  const refusal = async (cron: string, timeZone = 'UTC', min = 300) => {
    try {
      await checkedTiming({ cron, timeZone }, min);
    } catch (err) {
      if (err instanceof DomainError) return { code: err.errorCode, message: err.message, metadata: err.metadata };
      throw err;
    }
    return undefined;
  };

  it('is refused with 400 naming body.cron and the setting', async () => {
    const refused = await refusal('* * * * *');
    expect(refused).toMatchObject({
      code: 'VALIDATION_ERROR',
      metadata: { fields: [{ field: 'body.cron' }] },
    });
    expect(refused?.message).toContain(
      'fires 60 seconds apart: at least 300 seconds between firings (schedules.minIntervalSeconds)',
    );
    expect(await refusal('0,59 0,23 * * *')).toBeDefined();
  });

  it('is refused where a clock change brings two firings closer, saying which', async () => {
    expect((await refusal('0,59 1 * * *', 'America/New_York'))?.message).toMatch(
      /fires 60 seconds apart \(at the clock change of \S+ in America\/New_York\)/,
    );
    expect(await refusal('0,59 1 * * *', 'UTC', 3000)).toBeUndefined();
  });

  it('accepts crons whose firings keep the minimum', async () => {
    expect(await refusal('*/5 * * * *')).toBeUndefined();
    expect(await refusal('0 9 * * 1-5', 'Europe/Paris', 3600)).toBeUndefined();
  });
});
