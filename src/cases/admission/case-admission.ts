import { Gauge, Histogram, type Registry } from 'prom-client';
import type { CaseRecord } from '../../domain/case-records.js';
import { uncapped, type AdmissionRepo, type AdmissionTx } from '../../store/admission-repo.js';
import type { CaseCondition, CaseRepo, StartCaseInput } from '../../store/case-repo.js';
import type { TenancyRepo } from '../../store/tenancy-repo.js';
import { DomainError } from '../../errors.js';
import { admissible, fairShare, hasRoom, saturated, type FairShareRule, type SlotState } from './admission-rules.js';

export interface CaseAdmissionDeps {
  repo: AdmissionRepo;
  cases: Pick<CaseRepo, 'markRunning'>;
  tenancy: Pick<TenancyRepo, 'findOrganization'>;
  /** The organization cap where an organization set none (cases.maxConcurrentPerOrganization); null: none. */
  defaultCap: number | null;
  /** The fair share under contention (cases.fairShare); null: off. */
  fairShare: FairShareSettings | null;
  /**
   * The highest event-loop utilization over the last moments (0..1) of this process and of the processes that run
   * case work (CaseWorkLoad): the share engages only when saturated.
   */
  load: { utilization(): number };
  registry: Registry;
}

/** The fair share's rule, and how long a start keeps an organization active and a run counted. */
export interface FairShareSettings extends FairShareRule {
  /** An organization that started a case within this long (or has one queued) is active. */
  activeWindowMs: number;
  /** A run counts toward its organization's share this long after it started; older, it is taken to be waiting. */
  runnableMs: number;
  /** The event-loop utilization (0..1) at which the process is saturated and the share engages; 0: always. */
  saturation: number;
}

/**
 * The fair share as configured (cases.fairShare), null when it is off. A budget of 0 is twice the
 * Python servers: each runs a call per core with one waiting, the work a short case is made of.
 */
export function fairShareSettings(
  configured: FairShareSettings & { enabled: boolean },
  pythonServers: number,
): FairShareSettings | null {
  const { enabled, budget, ...rest } = configured;
  return enabled ? { ...rest, budget: budget || 2 * pythonServers } : null;
}

/** The limits an admission pass applies to one organization. */
interface Limits {
  organizationCap: number | null;
  /** Its fair share now; null: not limited by one (off, the process not saturated, alone, or the operator set its own cap). */
  share: number | null;
}

/** Where an execute's case stands after admission. */
export type Admission =
  /** It took a slot: start its run. `others`: queued cases admitted with it, whose runs are to start too. */
  | { status: 'RUNNING'; others: string[] }
  /** Over a cap: it waits in its organization's queue, with no Temporal run. */
  | { status: 'QUEUED'; others: string[] }
  /** The case was not PENDING (executed twice, cancelled). */
  | { status: 'NOT_PENDING' };

/** An organization's cap as the operator reads it, with where its slots stand now. */
export interface ConcurrencyPolicy {
  /** Cases running at once; null: no cap. */
  maxConcurrentCases: number | null;
  /** 'organization' when the operator set its own, 'default' when the configured default applies. */
  source: 'organization' | 'default';
  updatedAt: string | null;
  /** Slots its cases hold now (RUNNING, not waiting on a person). */
  running: number;
  /** Cases waiting in its queue. */
  queued: number;
}

/** Queued cases read per page of an admission pass. */
const PAGE = 100;

/**
 * Admission under concurrency caps and the fair share (docs/concurrency.md): a case takes a slot of
 * its organization (and of its workflow, when the workflow has a cap) or waits in its organization's
 * queue, FIFO; queued cases take the slots that free up. Slots are the store's RUNNING cases not
 * waiting on a person, counted under the organization's lock row, so every API and worker process
 * sees the same caps and a case whose run ended (its row ended with it) holds nothing, whatever
 * crashed. While another organization is active, an organization without a cap of its own also
 * keeps within its fair share of the run budget, counting only runs that started moments ago.
 */
export class CaseAdmission {
  private readonly queuedSeconds: Histogram;
  /** The condition of the one-statement admission, made once: the store compiles its statement once per condition. */
  private readonly uncapped: CaseCondition;

  constructor(private readonly deps: CaseAdmissionDeps) {
    this.uncapped = uncapped(deps.defaultCap !== null, deps.fairShare !== null);
    const registers = [deps.registry];
    const { repo, load } = deps;
    new Gauge({
      name: 'caseflow_admission_event_loop_utilization',
      help: 'Highest event-loop utilization over the last ~1.5 s (0..1) of this process and of the processes that run case work, as its admission reads it; the fair share engages at cases.fairShare.saturation',
      registers,
      collect() {
        this.set(load.utilization());
      },
    });
    new Gauge({
      name: 'caseflow_cases_queued',
      help: 'Cases waiting over a concurrency cap (status QUEUED), all organizations',
      registers,
      async collect() {
        this.set(await repo.queuedCount());
      },
    });
    this.queuedSeconds = new Histogram({
      name: 'caseflow_case_queued_seconds',
      help: 'How long cases under a concurrency cap waited for their slot (0: admitted at once)',
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400, 86_400],
      registers,
    });
  }

  /**
   * Accepts a PENDING case for its run: RUNNING when a slot is free and nobody of its organization
   * waits before it for that slot, QUEUED otherwise. Without any cap or share, and with nothing of its
   * organization queued, it is RUNNING at once (no lock).
   * Unless the share is engaged (on, and the process saturated), one statement that checks no cap is in
   * force (and, with the share on, nothing of its organization is queued) admits it, so the caps and
   * other organizations' activity are read only when they apply.
   */
  async admit(record: CaseRecord, start: StartCaseInput): Promise<Admission> {
    const busy = this.saturated();
    // Saturated, the share depends on other organizations' activity, which one statement cannot see; otherwise
    // that statement also checks nothing of the organization is queued (a queue from a saturated moment drains first).
    if (!busy && (await this.deps.cases.markRunning(record.id, start, this.uncapped)))
      return { status: 'RUNNING', others: [] };
    const { own, workflowCap } = await this.deps.repo.caps(record.organizationId, record.workflowId);
    const organizationCap = own ? own.maxConcurrentCases : this.deps.defaultCap;
    // The operator's own setting for the organization replaces the fair share.
    const contention = own ? undefined : await this.contention(record.organizationId, busy);
    const limits = { organizationCap, share: contention?.share ?? null };
    // Alone and uncapped it runs at once, unless its own queue (from a busier moment) is still draining: FIFO.
    if (organizationCap === null && workflowCap === null && limits.share === null && contention?.queued !== true) {
      const accepted = await this.deps.cases.markRunning(record.id, start);
      return accepted ? { status: 'RUNNING', others: [] } : { status: 'NOT_PENDING' };
    }
    return this.deps.repo.locked(record.organizationId, async (tx): Promise<Admission> => {
      if (!(await tx.enqueue(record.id, start))) return { status: 'NOT_PENDING' };
      const admitted = await this.promoteLocked(tx, limits, record.id);
      const others = admitted.filter((id) => id !== record.id);
      return { status: admitted.includes(record.id) ? 'RUNNING' : 'QUEUED', others };
    });
  }

  /** Gives the organization's free slots to its queued cases, oldest first; the ids admitted (their runs are to start). */
  async promote(organizationId: string): Promise<string[]> {
    if (!(await this.deps.repo.hasQueued(organizationId))) return [];
    const own = await this.deps.repo.findLimit(organizationId);
    const organizationCap = own ? own.maxConcurrentCases : this.deps.defaultCap;
    const share = own ? null : ((await this.contention(organizationId, this.saturated()))?.share ?? null);
    return this.deps.repo.locked(organizationId, (tx) => this.promoteLocked(tx, { organizationCap, share }));
  }

  /** The fair share is on and this process or case work is saturated (cases.fairShare.saturation): the share engages. */
  private saturated(): boolean {
    const rule = this.deps.fairShare;
    return rule !== null && saturated(rule.saturation, this.deps.load.utilization());
  }

  /**
   * The organization's share now (null: not limited) and whether it has cases queued; undefined when the
   * fair share is off. Saturated: its fair share while others are active. Not saturated: none, but a queue
   * left from a saturated moment drains at that same share while others are active, not all at once
   * (hundreds of runs let in together would saturate the worker again at once, and a drain wider than the
   * share would take from the others what the share gave them).
   */
  private async contention(
    organizationId: string,
    busy: boolean,
  ): Promise<{ share: number | null; queued: boolean } | undefined> {
    const rule = this.deps.fairShare;
    if (!rule) return undefined;
    const { others, queued } = await this.deps.repo.contention(organizationId, msAgo(rule.activeWindowMs));
    if (busy) return { share: fairShare(rule, others), queued };
    return { share: queued ? fairShare(rule, others) : null, queued };
  }

  /** The organization's cap (404 for an unknown organization) and its slots now. */
  async policy(organizationId: string): Promise<ConcurrencyPolicy> {
    await this.requireOrganization(organizationId);
    const { repo } = this.deps;
    const own = await repo.findLimit(organizationId);
    const [running, queued] = await Promise.all([repo.held(organizationId), repo.queuedCount(organizationId)]);
    const cap = own
      ? { maxConcurrentCases: own.maxConcurrentCases, source: 'organization' as const, updatedAt: own.updatedAt }
      : { maxConcurrentCases: this.deps.defaultCap, source: 'default' as const, updatedAt: null };
    return { ...cap, running, queued };
  }

  /**
   * Sets the organization's own cap (null: no cap, whatever the default), or with `undefined` drops
   * it so the default applies. Queued cases a raised cap lets in start at the next periodic pass;
   * a lowered cap stops nothing that runs, new cases wait until the count is under it.
   */
  async setPolicy(organizationId: string, maxConcurrentCases: number | null | undefined): Promise<ConcurrencyPolicy> {
    await this.requireOrganization(organizationId);
    if (maxConcurrentCases === undefined) await this.deps.repo.clearLimit(organizationId);
    else await this.deps.repo.setLimit(organizationId, maxConcurrentCases);
    return this.policy(organizationId);
  }

  private async requireOrganization(organizationId: string): Promise<void> {
    if (!(await this.deps.tenancy.findOrganization(organizationId)))
      throw DomainError.notFound(`Organization ${organizationId} does not exist`);
  }

  /** Organizations with cases waiting (the periodic pass goes through these). */
  waitingOrganizations(): Promise<string[]> {
    return this.deps.repo.waitingOrganizations();
  }

  /** A queued case cancelled before it took a slot; false when it is no longer QUEUED. */
  cancelQueued(caseId: string): Promise<boolean> {
    return this.deps.repo.cancelQueued(caseId);
  }

  private async promoteLocked(tx: AdmissionTx, limits: Limits, newcomer?: string): Promise<string[]> {
    const { organizationCap, share } = limits;
    const rule = this.deps.fairShare;
    const recent = share === null || !rule ? 0 : await tx.heldSince(msAgo(rule.runnableMs));
    const state: SlotState = { organizationCap, held: await tx.held(), share, recent, heldByWorkflow: new Map() };
    const admitted: string[] = [];
    const full: string[] = [];
    let after;
    while (hasRoom(state)) {
      const page = await tx.queued(after, PAGE, full);
      if (page.length === 0) break;
      const unread = [...new Set(page.map((q) => q.workflowId))].filter((id) => !state.heldByWorkflow.has(id));
      for (const [id, held] of await tx.heldByWorkflow(unread)) state.heldByWorkflow.set(id, held);
      for (const id of unread) if (!state.heldByWorkflow.has(id)) state.heldByWorkflow.set(id, 0);
      const picked = admissible(page, state);
      full.push(...picked.full);
      const now = Date.now();
      for (const queued of picked.admitted) {
        admitted.push(queued.id);
        this.queuedSeconds.observe(queued.id === newcomer ? 0 : Math.max(0, now - Date.parse(queued.queuedAt)) / 1000);
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1];
    }
    await tx.admit(admitted);
    if (newcomer !== undefined && admitted.includes(newcomer)) await tx.neverWaited(newcomer);
    return admitted;
  }
}

/** The time `ms` ago, as the store writes times. */
function msAgo(ms: number): string {
  return new Date(Date.now() - ms).toISOString();
}
