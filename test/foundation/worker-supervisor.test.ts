import { describe, expect, it } from 'vitest';
import type { State } from '@temporalio/worker';
import { createLogger } from '../../src/logging/logger.js';
import { superviseWorker, type RunnableWorker } from '../../src/temporal/worker-supervisor.js';

/** A worker whose run ends when the test says: failed, or drained after shutdown. */
class ScriptedWorker implements RunnableWorker {
  private state: State = 'INITIALIZED';
  private end?: { resolve: () => void; reject: (err: Error) => void };

  run(): Promise<void> {
    this.state = 'RUNNING';
    return new Promise((resolve, reject) => (this.end = { resolve, reject }));
  }

  shutdown(): void {
    this.state = 'DRAINING';
    this.end?.resolve();
  }

  getState(): State {
    return this.state;
  }

  fail(message: string): void {
    this.state = 'FAILED';
    this.end?.reject(new Error(message));
  }
}

describe('the supervised worker', () => {
  it('replaces a worker whose run failed, and stops the one running at stop', async () => {
    const created: ScriptedWorker[] = [];
    const supervised = await superviseWorker(
      () => {
        const worker = new ScriptedWorker();
        created.push(worker);
        return Promise.resolve(worker);
      },
      createLogger('silent'),
      { initialBackoffMs: 10 },
    );
    expect(created).toHaveLength(1);
    created[0]?.fail('polls failed for too long');
    for (let i = 0; i < 100 && created.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(created).toHaveLength(2);
    expect(supervised.current()).toBe(created[1]);
    expect(supervised.current().getState()).toBe('RUNNING');

    await supervised.stop();
    expect(created[1]?.getState()).toBe('DRAINING');
    await new Promise((r) => setTimeout(r, 50));
    expect(created).toHaveLength(2);
  });
});
