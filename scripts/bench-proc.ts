import { readFileSync, readdirSync } from 'node:fs';

/**
 * CPU and RSS of a bench subject's process trees, read from /proc: per
 * thread, grouped by the part of the system it is (the Node main thread, the
 * workflow threads, the Temporal core SDK, the Temporal server, Python, …).
 */
const TICK_MS = 10; // USER_HZ is 100 on Linux.

/** A process the bench started, and what to call it when there are several (the split roles). */
export interface Root {
  pid: number;
  label: string;
  /** Name its own threads as a caseflow service (main thread, workflow threads, core SDK) or as one group. */
  kind: 'caseflow' | 'other';
}

export interface ThreadSample {
  group: string;
  ticks: number;
}

export interface TreeSample {
  threads: ThreadSample[];
  rssKb: number;
  rssByProcess: Map<string, number>;
}

/** The fields of a /proc stat file after the process's name (the first is its state). */
function statFields(file: string): string[] {
  return readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
}

/** Every process under `root` (inclusive), from /proc's parent links. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(statFields(`/proc/${entry}/stat`)[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited while we looked
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i] ?? -1) ?? []));
  return out;
}

export function comm(pathName: string): string {
  return readFileSync(pathName, 'utf8').trim();
}

/** The row of a caseflow service's threads that ended between two samples. */
export const exitedThreadsGroup = 'node exited threads (vm timeout watchdogs)';

/** A child process by its name (the same in every subject: the Temporal server, Python, n8n's task runner). */
function childGroup(processName: string, root: Root): string {
  if (processName.startsWith('temporal')) return 'temporal server';
  if (processName.startsWith('python') || processName === 'bwrap') return 'python';
  return `${root.label}: child ${processName}`;
}

/**
 * A thread of a caseflow service's own Node process, by its name. Node 20 names its worker threads (the
 * Temporal SDK's workflow threads) `node` too, like the main thread: only the main thread's id is the process's.
 */
function serviceThreadGroup(threadName: string, isMain: boolean, root: Root): string {
  const prefix = `${root.label}: `;
  if (isMain) return `${prefix}node main thread (API + activities)`;
  if (threadName === 'node' || threadName === 'MainThread') return `${prefix}node worker threads (workflows)`;
  if (/^V8 |DefaultWorker|GC/i.test(threadName)) return `${prefix}node V8 helpers (GC, compiler)`;
  if (/tokio|temporal|core/i.test(threadName)) return `${prefix}temporal core SDK (Rust)`;
  if (/libuv|uv/i.test(threadName)) return `${prefix}node libuv pool`;
  return `${prefix}node thread: ${threadName}`;
}

export function sample(roots: Root[]): TreeSample {
  const threads: ThreadSample[] = [];
  const rssByProcess = new Map<string, number>();
  let rssKb = 0;
  for (const root of roots) {
    for (const pid of processTree(root.pid)) {
      try {
        const processName = comm(`/proc/${pid}/comm`);
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
        rssKb += rss;
        const processGroup = pid === root.pid ? root.label : childGroup(processName, root);
        rssByProcess.set(processGroup, (rssByProcess.get(processGroup) ?? 0) + rss);
        let liveTicks = 0;
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const stat = statFields(`/proc/${pid}/task/${tid}/stat`);
          const ticks = Number(stat[11]) + Number(stat[12]);
          liveTicks += ticks;
          const group =
            pid !== root.pid
              ? processGroup
              : root.kind === 'caseflow'
                ? serviceThreadGroup(comm(`/proc/${pid}/task/${tid}/comm`), tid === String(pid), root)
                : root.label;
          threads.push({ group, ticks });
        }
        // The processes it reaped (the Python runner's per-call children, a recycled Python server): their CPU
        // left the live threads above when they ended, so it is counted here, or it would vanish between samples.
        const stat = statFields(`/proc/${pid}/stat`);
        // Threads of the service that ended (Node's watchdog thread of each `vm` call given a timeout, one per
        // call into the workflow sandbox): the process's own ticks count them, no live thread does.
        if (pid === root.pid && root.kind === 'caseflow') {
          const exited = Number(stat[11]) + Number(stat[12]) - liveTicks;
          threads.push({ group: `${root.label}: ${exitedThreadsGroup}`, ticks: exited });
        }
        const reapedGroup = pid !== root.pid ? processGroup : root.kind === 'caseflow' ? 'python' : root.label;
        threads.push({ group: reapedGroup, ticks: Number(stat[13]) + Number(stat[14]) });
      } catch {
        // exited while we looked
      }
    }
  }
  return { threads, rssKb, rssByProcess };
}

/** User + system ticks of a process, those of the children it has reaped included. */
function ticksWithReaped(pid: number | 'self'): number {
  try {
    const stat = statFields(`/proc/${pid}/stat`);
    return Number(stat[11]) + Number(stat[12]) + Number(stat[13]) + Number(stat[14]);
  } catch {
    return 0; // exited while we looked: its parent has it now
  }
}

/**
 * CPU milliseconds this process and every process under `roots` have used so far, the exited
 * ones included (each counts in the process that reaped it). The difference of two readings is
 * what was spent between them, also by the processes that ended or started in between.
 */
export function cpuMsWithChildren(roots: number[]): { total: number; self: number } {
  let ticks = ticksWithReaped('self');
  for (const root of roots) for (const pid of processTree(root)) ticks += ticksWithReaped(pid);
  const own = process.cpuUsage();
  return { total: ticks * TICK_MS, self: (own.user + own.system) / 1000 };
}

/** CPU milliseconds per group between two samples. */
export function cpuByGroup(before: ThreadSample[], after: ThreadSample[]): Map<string, number> {
  const sum = (list: ThreadSample[]) =>
    list.reduce((m, t) => m.set(t.group, (m.get(t.group) ?? 0) + t.ticks), new Map<string, number>());
  const [b, a] = [sum(before), sum(after)];
  return new Map([...a].map(([group, ticks]) => [group, (ticks - (b.get(group) ?? 0)) * TICK_MS]));
}

export function megabytes(kb: number): string {
  return `${(kb / 1024).toFixed(0)} MB`;
}
