import { describe, expect, it } from 'vitest';
import { waitingForAnother } from '../../src/store/waiting-for-another.js';

describe('waitingForAnother', () => {
  it('tries until the other process lets go, telling once that it waits', async () => {
    const answers = [undefined, undefined, 'done'];
    let told = 0;
    const answer = await waitingForAnother(() => Promise.resolve(answers.shift()), {
      pollMs: 1,
      onWaiting: () => (told += 1),
    });
    expect(answer).toBe('done');
    expect(answers).toEqual([]);
    expect(told).toBe(1);
  });

  it('gives up past its limit with the error it was given', async () => {
    let attempts = 0;
    const waited = waitingForAnother(
      () => {
        attempts += 1;
        return Promise.resolve(undefined);
      },
      { pollMs: 5, onWaiting: () => undefined, limit: { ms: 50, gaveUp: () => new Error('gave up') } },
    );
    await expect(waited).rejects.toThrow('gave up');
    expect(attempts).toBeGreaterThan(1);
  });
});
