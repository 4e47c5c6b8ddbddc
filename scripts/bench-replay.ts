import { readFileSync } from 'node:fs';
import path from 'node:path';
import { IllegalStateError } from '@temporalio/common';
// A CommonJS module whose exports Node's ESM loader cannot name.
import proto from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { projectRoot } from '../src/config/paths.js';
import { workflowBundlePath } from '../src/temporal/worker.js';

const RUNS = Number(process.env.BENCH_REPLAY_RUNS ?? 400);
/** Runs not counted: the first ones pay for the context's creation and V8's first compilations. */
const WARMUP = Number(process.env.BENCH_REPLAY_WARMUP ?? 40);
/** One recorded case: input → Python → output, local activities (test/nodes/replay.test.ts). */
const HISTORY = process.env.BENCH_REPLAY_HISTORY ?? 'local-completed.bin';

/**
 * `npm run bench -- replay`: the workflow code's CPU per case run, the Temporal server and activities aside: one
 * recorded case replayed by one replay worker, which runs its workflows in this thread in one reused V8 context
 * as a worker's workflow thread does (each run evaluates the bundle's modules that are not preloaded again).
 * The CPU is the whole process's (sdk-core's replay included). Run the builds of two checkouts in turn
 * (`node <dir>/dist/scripts/bench.js replay`) for an A/B.
 */
export async function benchReplay(): Promise<void> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  } catch (err) {
    // An earlier bench of this process (cases) made the runtime: replay on it as it is.
    if (!(err instanceof IllegalStateError)) throw err;
  }
  const history = proto.temporal.api.history.v1.History.decode(
    readFileSync(path.join(projectRoot, 'test', 'nodes', 'histories', HISTORY)),
  );
  let start: NodeJS.CpuUsage | undefined;
  function* histories() {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      if (i === WARMUP) start = process.cpuUsage();
      yield { history, workflowId: `bench-replay-${i}` };
    }
  }
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: workflowBundlePath } },
    histories(),
  )) {
    if (result.error) throw result.error;
  }
  const used = process.cpuUsage(start);
  const perRun = (used.user + used.system) / 1000 / RUNS;
  console.log(
    `replay: ${perRun.toFixed(3)} ms CPU per run of ${HISTORY} over ${RUNS} runs (${WARMUP} before, not counted)`,
  );
}
