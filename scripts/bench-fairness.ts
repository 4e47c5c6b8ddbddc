import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { post } from './bench-http.js';
import type { FairnessJob, FairnessResult, Latencies, TenantJob } from './bench-fairness-load.js';
import { describeGrowth, readCounters } from './bench-counters.js';
import { benchTenantOf, distRoot, startCaseflow, type EmbeddedTopology } from './bench-subjects.js';

/**
 * `npm run bench -- fairness`: does one organization's burst starve another's
 * cases? For each variant (BENCH_FAIRNESS_VARIANTS, default "fair,fifo"),
 * repeated BENCH_FAIRNESS_ROUNDS times (default 2) alternating, it starts
 * `npm start` fresh, adds organization B through the admin API and forks
 * `scripts/bench-fairness-load.ts`: B's cases one at a time alone
 * (BENCH_FAIRNESS_IDLE_CASES, default 30), then during A's burst
 * (BENCH_FAIRNESS_BURST cases, default 2000, from BENCH_FAIRNESS_BURST_CONCURRENCY
 * clients, default 32). The end is one table: B's p50/p95 both ways and their ratio.
 *
 * A variant is `fair` (the defaults: the embedded server's task-queue fairness on),
 * `fifo` (TEMPORAL_DEV_FAIRNESS=false), or `name:KEY=VALUE+KEY=VALUE` for any
 * other environment of the service (all its processes). Two lower-case keys
 * are the bench's own: `workers=n` starts n `serve --role worker` processes
 * beside it, `role=api` starts it without a worker of its own (see EmbeddedTopology).
 */
const here = path.dirname(fileURLToPath(import.meta.url));

const builtIn: Record<string, Record<string, string>> = {
  fair: {},
  fifo: { TEMPORAL_DEV_FAIRNESS: 'false' },
};

interface Variant {
  name: string;
  env: Record<string, string>;
  topology: EmbeddedTopology;
}

/** The bench's own keys of a variant: its processes, not their environment. */
function parseTopology(options: Map<string, string>): EmbeddedTopology {
  for (const key of options.keys())
    if (key !== 'role' && key !== 'workers') throw new Error(`BENCH_FAIRNESS_VARIANTS: unknown option ${key}`);
  const role = options.get('role') ?? 'all';
  const workers = Number(options.get('workers') ?? 0);
  if (role !== 'all' && role !== 'api') throw new Error(`BENCH_FAIRNESS_VARIANTS: role=${role} (all or api)`);
  if (!Number.isInteger(workers) || workers < 0) throw new Error(`BENCH_FAIRNESS_VARIANTS: workers=${workers}`);
  return { role, workers };
}

function parseVariant(spec: string): Variant {
  const [name = '', assignments] = spec.split(':');
  const env = builtIn[name];
  if (assignments === undefined) {
    if (!env) throw new Error(`BENCH_FAIRNESS_VARIANTS: unknown variant "${spec}" (fair, fifo, name:KEY=VALUE+…)`);
    return { name, env, topology: parseTopology(new Map()) };
  }
  const pairs = assignments.split('+').map((a): [string, string] => {
    const at = a.indexOf('=');
    if (at <= 0) throw new Error(`BENCH_FAIRNESS_VARIANTS: "${a}" is not KEY=VALUE`);
    return [a.slice(0, at), a.slice(at + 1)];
  });
  const own = (key: string) => key === key.toLowerCase();
  return {
    name,
    env: { ...env, ...Object.fromEntries(pairs.filter(([key]) => !own(key))) },
    topology: parseTopology(new Map(pairs.filter(([key]) => own(key)))),
  };
}

/** A second organization with a workspace, a member and an organization-wide key, through the admin API. */
async function secondOrganization(baseUrl: string, adminToken: string): Promise<string> {
  const admin = { authorization: `Bearer ${adminToken}` };
  const org = await post(`${baseUrl}/admin/organizations`, { name: 'bench B', verified: true }, admin);
  const organizationId = String(org.id);
  await post(`${baseUrl}/admin/organizations/${organizationId}/workspaces`, { name: 'bench B' }, admin);
  const user = await post(
    `${baseUrl}/admin/users`,
    { email: `bench-b-${Date.now()}@example.com`, name: 'Bench B', organizationId, role: 'owner' },
    admin,
  );
  const grants = ['workflow:full', 'case:full', 'file:full', 'code:full'];
  const key = await post(
    `${baseUrl}/admin/keys`,
    { organizationId, userId: String(user.id), name: 'bench B', grants },
    admin,
  );
  return String(key.key);
}

async function measure(variant: Variant): Promise<FairnessResult> {
  const adminToken = randomBytes(24).toString('hex');
  const env = { ...variant.env, CASEFLOW_ADMIN_TOKEN: adminToken };
  const subject = await startCaseflow(distRoot, env, undefined, variant.topology);
  try {
    const a = subject.job([]);
    if (a.kind !== 'case') throw new Error('the fairness bench measures caseflow');
    const tenantA: TenantJob = { baseUrl: a.baseUrl, key: a.key, workflowId: a.workflowId, secret: a.secret };
    const job: FairnessJob = {
      a: tenantA,
      b: await benchTenantOf(a.baseUrl, await secondOrganization(a.baseUrl, adminToken)),
      burst: Number(process.env.BENCH_FAIRNESS_BURST ?? 2000),
      burstConcurrency: Number(process.env.BENCH_FAIRNESS_BURST_CONCURRENCY ?? 32),
      idleCases: Number(process.env.BENCH_FAIRNESS_IDLE_CASES ?? 30),
    };
    // Settled as the e2e bench lets it, so B's idle figure is not the start's.
    await new Promise((r) => setTimeout(r, 10_000));
    const counterUrls = [subject.metricsUrl, subject.engineMetricsUrl];
    const countersBefore = await readCounters(counterUrls);
    const load = spawn(process.execPath, [path.join(here, 'bench-fairness-load.js')], {
      env: { ...process.env, BENCH_FAIRNESS_JOB: JSON.stringify(job) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exit = new Promise<number | null>((resolve) => load.once('exit', resolve));
    let result: FairnessResult | undefined;
    for await (const line of createInterface({ input: load.stdout })) result = JSON.parse(line) as FairnessResult;
    const code = await exit;
    if (code !== 0 || !result) throw new Error(`the fairness load process exited with ${code}`);
    const grown = describeGrowth(countersBefore, await readCounters(counterUrls), result.burst.cases);
    console.log(`fairness [${variant.name}]: counters over the run, per case of A's burst:`);
    for (const line of grown) console.log(`fairness:   ${line}`);
    return result;
  } finally {
    await subject.stop();
  }
}

const ms = (n: number) => n.toFixed(0);
/** A run's stage p50s, `submit/toNode/node/toCallback/delivery` ms (see Stage). */
const stages = (l: Latencies) => Object.values(l.stages).map(ms).join('/');

function tableRow(round: number, variant: string, r: FairnessResult, load: string): string {
  const { idle, during, burst } = r;
  return [
    round,
    variant,
    `${ms(idle.p50)} / ${ms(idle.p95)} (${ms(idle.submitP50)})`,
    `${ms(during.p50)} / ${ms(during.p95)} (${ms(during.submitP50)}; ${during.cases})`,
    `${(during.p50 / idle.p50).toFixed(2)}×`,
    `${(during.p95 / idle.p95).toFixed(2)}×`,
    `${stages(idle)} → ${stages(during)}`,
    `${burst.cases} in ${burst.seconds.toFixed(0)} s (submitted in ${burst.submitSeconds.toFixed(0)} s, ${burst.notCompleted} not completed, ${r.unavailable} executes retried after 503)`,
    load,
  ].reduce((line: string, cell) => `${line} ${cell} |`, '|');
}

export async function benchFairness(): Promise<void> {
  const variants = (process.env.BENCH_FAIRNESS_VARIANTS ?? 'fair,fifo').split(',').map(parseVariant);
  const rounds = Number(process.env.BENCH_FAIRNESS_ROUNDS ?? 2);
  console.log(`fairness: ${os.availableParallelism()} CPUs; variants ${variants.map((v) => v.name).join(', ')}`);
  const rows: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const variant of variants) {
      const r = await measure(variant);
      const load = (os.loadavg()[0] ?? 0).toFixed(1);
      const row = tableRow(round, variant.name, r, load);
      console.log(`fairness ${row}`);
      if (r.badSignatures > 0)
        console.log(`fairness: WARNING ${r.badSignatures} callbacks failed signature verification`);
      rows.push(row);
    }
  }
  console.log('\nfairness: organization B, initiate → signed callback, alone and during A’s burst');
  console.log(
    '| round | variant | B alone p50 / p95 ms (submit p50) | B during burst p50 / p95 ms (submit p50; cases) | ratio p50 | ratio p95 | stage p50s ms alone → during (submit/toNode/node/toCallback/delivery) | A’s burst | load avg |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
}
