import type { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { startCallbackReceiver, type CallbackReceiver } from './callback-receiver.js';
import { stopGroup } from './bench-process-group.js';
import { comm, processTree } from './bench-proc.js';
import {
  answers,
  caseJobOf,
  distRoot,
  embeddedLaunch,
  startServe,
  startSplit,
  waitFor,
  type EmbeddedLaunch,
} from './bench-subjects.js';
import { startPrivatePostgres } from './chaos-postgres.js';
import { CaseTraffic, type CaseTarget } from './chaos-traffic.js';
import { settle, verdict, type Fault, type ScenarioResult } from './chaos-verdict.js';

/**
 * The five faults of `npm run chaos`, each against a service started from
 * nothing with cases flowing: the fault is injected, the service is left to
 * heal by itself, the clients stop, and every case is checked.
 */
const seconds = (name: string, fallback: number) => Number(process.env[name] ?? fallback) * 1000;
const timing = {
  /** Cases flowing before the first fault. */
  warmMs: seconds('CHAOS_WARM_S', 8),
  /** Cases flowing after the service is back from a fault. */
  afterMs: seconds('CHAOS_AFTER_S', 10),
  /** The longest wait for the last callbacks once the clients stop. */
  settleMs: seconds('CHAOS_SETTLE_S', 150),
  /** The longest wait for the service to be ready again. */
  readyMs: 120_000,
};
const trafficOptions = {
  clients: Number(process.env.CHAOS_CLIENTS ?? 6),
  paceMs: Number(process.env.CHAOS_PACE_MS ?? 1000),
};
/** With CHAOS_LOG_DIR set, each service process's log (warn and above) is kept there. */
const logDir = process.env.CHAOS_LOG_DIR;

/** The service under test as the scenario drives it. */
interface Stage {
  target: CaseTarget;
  secret: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

/** The processes below `root` whose name starts with one of `prefixes`. */
function processesNamed(root: number, prefixes: string[]): number[] {
  return processTree(root).filter((pid) => {
    try {
      const name = comm(`/proc/${pid}/comm`);
      return pid !== root && prefixes.some((p) => name.startsWith(p));
    } catch {
      return false; // exited while we looked
    }
  });
}

function kill9(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

const ready = (stage: Stage) => answers(`${stage.target.baseUrl}/readyz`)();

async function untilReady(stage: Stage): Promise<void> {
  const until = performance.now() + timing.readyMs;
  while (!(await ready(stage))) {
    if (performance.now() > until) throw new Error(`not ready again within ${timing.readyMs} ms`);
    await delay(250);
  }
}

function keepLog(child: ChildProcess, name: string): void {
  if (logDir && child.stdout) child.stdout.pipe(createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' }));
}

/** `npm start` (embedded Temporal, SQLite) in a temporary data directory, which `restart` reuses after a kill -9. */
class EmbeddedDaemon implements Stage {
  target: CaseTarget = { baseUrl: '', key: '', workflowId: '' };
  secret = '';
  temporalAddress: string;
  private child: ChildProcess | undefined;

  private constructor(
    private readonly dataDir: string,
    private readonly launch: EmbeddedLaunch,
    private readonly name: string,
  ) {
    this.temporalAddress = launch.temporalAddress;
  }

  static async start(name: string): Promise<EmbeddedDaemon> {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-chaos-'));
    const daemon = new EmbeddedDaemon(dataDir, await embeddedLaunch(dataDir), name);
    try {
      const { key } = await daemon.serve();
      const job = (await caseJobOf(daemon.launch.baseUrl, await key))([]);
      if (job.kind !== 'case') throw new Error('the subject has no case job');
      daemon.target = { baseUrl: job.baseUrl, key: job.key, workflowId: job.workflowId };
      daemon.secret = job.secret;
      return daemon;
    } catch (err) {
      await daemon.stop();
      throw err;
    }
  }

  pid(): number {
    return this.child?.pid ?? 0;
  }

  /** Starts the process and waits until it is ready; its bootstrap key is printed on the first start only. */
  private async serve(): Promise<{ key: Promise<string> }> {
    const { child, key } = startServe(distRoot, 'all', this.launch.env);
    this.child = child;
    keepLog(child, this.name);
    await waitFor('the service', child, answers(`${this.launch.baseUrl}/readyz`));
    return { key };
  }

  /** kill -9 of the whole process (its children are left as a crash leaves them), then started again. */
  async killAndRestart(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    kill9([this.pid()]);
    await exited;
    await this.serve();
  }

  async stop(): Promise<void> {
    if (this.child) await stopGroup(this.child);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * One scenario: the stage started, cases flowing for a while, the faults
 * injected (`inject` returns once the service is back and cases flowed
 * again), then the last callbacks awaited and every case checked.
 */
async function scenario<S extends Stage>(
  name: string,
  start: () => Promise<S>,
  inject: (stage: S, receiver: CallbackReceiver, faults: Fault[], traffic: CaseTraffic) => Promise<void>,
): Promise<ScenarioResult> {
  const startedAt = performance.now();
  console.log(`\n== chaos: ${name} ==`);
  const stage = await start();
  try {
    const traffic = new CaseTraffic(stage.target, trafficOptions);
    const receiver = await startCallbackReceiver(stage.secret, traffic.record);
    try {
      traffic.start(receiver.url);
      await delay(timing.warmMs);
      const faults: Fault[] = [];
      await inject(stage, receiver, faults, traffic);
      await traffic.stop();
      console.log(`chaos: ${traffic.cases.length} cases sent; waiting for their callbacks`);
      await settle(traffic, stage.target, timing.settleMs);
      return await verdict(name, startedAt, traffic, stage.target, stage.temporalAddress, faults);
    } finally {
      await traffic.stop();
      await receiver.close();
    }
  } finally {
    await stage.stop();
  }
}

/** Waits (a few seconds at most) until cases are in flight, so a fault meets work under way. */
async function whileInFlight(traffic: CaseTraffic): Promise<void> {
  for (let i = 0; i < 250 && traffic.inFlight() < 2; i++) await delay(20);
}

/** Logs a fault and notes when the service was left to heal from it. */
function injected(faults: Fault[], what: string): void {
  console.log(`chaos: ${what}`);
  faults.push({ what, at: performance.now() });
}

async function temporalKills(): Promise<ScenarioResult> {
  return scenario(
    'kill -9 of the embedded Temporal server, twice',
    () => EmbeddedDaemon.start('temporal-kill'),
    async (daemon, _receiver, faults, traffic) => {
      for (const n of [1, 2]) {
        await whileInFlight(traffic);
        const servers = processesNamed(daemon.pid(), ['temporal']);
        if (servers.length === 0) throw new Error('no embedded Temporal server found below the service');
        kill9(servers);
        injected(faults, `kill -9 #${n}`);
        // The probe needs a moment to notice; readiness before that is the old answer.
        await delay(2000);
        await untilReady(daemon);
        await delay(timing.afterMs);
      }
    },
  );
}

async function pythonKills(): Promise<ScenarioResult> {
  return scenario(
    'kill -9 of every Python runner process',
    () => EmbeddedDaemon.start('python-kill'),
    async (daemon, _receiver, faults, traffic) => {
      await whileInFlight(traffic);
      const runners = processesNamed(daemon.pid(), ['python', 'bwrap']);
      if (runners.length === 0) throw new Error('no Python runner found below the service');
      kill9(runners);
      injected(faults, `kill -9 of ${runners.length} processes`);
      await delay(timing.afterMs);
    },
  );
}

async function daemonKill(): Promise<ScenarioResult> {
  return scenario(
    'kill -9 of the whole daemon, restarted on the same data',
    () => EmbeddedDaemon.start('daemon-kill'),
    async (daemon, _receiver, faults, traffic) => {
      await whileInFlight(traffic);
      const restarted = daemon.killAndRestart();
      injected(faults, 'kill -9, started again');
      await restarted;
      await delay(timing.afterMs);
    },
  );
}

async function receiverOutage(): Promise<ScenarioResult> {
  const spellMs = seconds('CHAOS_RECEIVER_SPELL_S', 8);
  return scenario(
    'callback receiver: 503s, then connection refused, then back',
    () => EmbeddedDaemon.start('receiver-outage'),
    async (_daemon, receiver, faults) => {
      await receiver.setMode('unavailable');
      console.log(`chaos: the receiver answers 503 for ${spellMs / 1000} s`);
      await delay(spellMs);
      await receiver.setMode('refusing');
      console.log(`chaos: the receiver refuses connections for ${spellMs / 1000} s`);
      await delay(spellMs);
      await receiver.setMode('ok');
      injected(faults, 'receiver back');
      await delay(timing.afterMs);
    },
  );
}

async function splitRoles(): Promise<ScenarioResult> {
  const outageMs = seconds('CHAOS_POSTGRES_OUTAGE_S', 10);
  const postgres = await startPrivatePostgres();
  try {
    return await scenario(
      'split roles on Postgres: Postgres stopped, then one of two workers killed',
      async () => {
        const subject = await startSplit(distRoot, postgres.url);
        const job = subject.job([]);
        if (job.kind !== 'case' || !subject.temporalAddress) throw new Error('the split subject has no case job');
        return {
          target: { baseUrl: job.baseUrl, key: job.key, workflowId: job.workflowId },
          secret: job.secret,
          temporalAddress: subject.temporalAddress,
          workerPids: subject.roots.filter((r) => r.label.startsWith('worker')).map((r) => r.pid),
          stop: () => subject.stop(),
        };
      },
      async (stage, _receiver, faults, traffic) => {
        await whileInFlight(traffic);
        postgres.stop();
        console.log(`chaos: Postgres stopped for ${outageMs / 1000} s`);
        await delay(outageMs);
        postgres.start();
        injected(faults, 'Postgres back');
        await untilReady(stage);
        await delay(timing.afterMs);
        await whileInFlight(traffic);
        kill9(stage.workerPids.slice(0, 1));
        injected(faults, 'kill -9 of worker 1');
        await delay(timing.afterMs);
      },
    );
  } finally {
    postgres.destroy();
  }
}

export const scenarios: Record<string, () => Promise<ScenarioResult>> = {
  '1': temporalKills,
  '2': pythonKills,
  '3': daemonKill,
  '4': receiverOutage,
  '5': splitRoles,
};
