import { Counter, Gauge, type Registry } from 'prom-client';
import type { AuthContext } from '../domain/auth-context.js';
import type { CaseService } from '../cases/case-service.js';
import type { Config } from '../config/config.js';
import { isTerminal } from '../domain/cases.js';
import { DomainError } from '../errors.js';
import type { FileService } from '../files/file-service.js';
import type { Logger } from '../logging/logger.js';
import type { Store } from '../store/database.js';
import type { RetentionRepo } from '../store/retention-repo.js';
import type { TenancyRepo } from '../store/tenancy-repo.js';
import type { RetentionScheduleGateway } from '../temporal/gateways/retention-schedule.js';

export interface RetentionServiceDeps {
  repo: RetentionRepo;
  tenancy: TenancyRepo;
  cases: Pick<CaseService, 'load'>;
  files: Pick<FileService, 'removeBytes'>;
  schedule: RetentionScheduleGateway;
  dialect: Store['dialect'];
  settings: Config['retention'];
  logger: Logger;
  registry: Registry;
}

/** The periods in force for an organization: its own policy, else the configured defaults. */
export interface EffectivePolicy {
  keepDays: number | null;
  keepFailedDays: number | null;
  /** 'organization' when the organization set its own, 'default' otherwise. */
  source: 'organization' | 'default';
  updatedAt: string | null;
}

export interface PurgeBatch {
  cases: number;
  /** Generation runs erased (their rows count in `rows` too). */
  generationRuns: number;
  rows: number;
  /** More expired cases remain (the batch was full). */
  more: boolean;
}

const DAY_MS = 86_400_000;
/** Pages handed back per incremental_vacuum step: the write lock is held for one step at a time. */
const VACUUM_PAGES = 2_000;

/**
 * Retention and erasure: a case erased on request (with what belongs only to
 * it), organizations' retention policies, and the scheduled purge that applies
 * them in small batches, then gives the space back to the file system (SQLite).
 */
export class RetentionService {
  private readonly rowsDeleted: Counter;
  private readonly casesErased: Counter;
  private readonly bytesReclaimed: Counter;
  private readonly lastRun: Gauge;

  constructor(private readonly deps: RetentionServiceDeps) {
    const registers = [deps.registry];
    this.rowsDeleted = new Counter({
      name: 'caseflow_retention_rows_deleted_total',
      help: 'Rows deleted by retention and erasure (cases, node records, deliveries, attempts, files)',
      registers,
    });
    this.casesErased = new Counter({
      name: 'caseflow_retention_cases_erased_total',
      help: 'Cases erased, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.bytesReclaimed = new Counter({
      name: 'caseflow_retention_bytes_reclaimed_total',
      help: 'Bytes the SQLite database file shrank by after retention runs',
      registers,
    });
    this.lastRun = new Gauge({
      name: 'caseflow_retention_last_run_timestamp_seconds',
      help: 'When this process last finished a retention run (unix seconds)',
      registers,
    });
  }

  /** Erases one ended case and what belongs only to it (Case: Full); a case not ended yet is a 409. */
  async eraseCase(auth: AuthContext, caseId: string): Promise<void> {
    const record = await this.deps.cases.load(auth, caseId, 'case:full');
    if (!isTerminal(record.status))
      throw DomainError.conflict(`Case ${caseId} is ${record.status}: cancel it first`, { status: record.status });
    await this.erase([caseId], 'request');
  }

  async policy(organizationId: string): Promise<EffectivePolicy> {
    await this.requireOrganization(organizationId);
    const own = await this.deps.repo.findPolicy(organizationId);
    return own ? { ...own, source: 'organization' } : this.defaults();
  }

  /** Sets the organization's periods (days; null keeps that kind of case). */
  async setPolicy(
    organizationId: string,
    keepDays: number | null,
    keepFailedDays: number | null,
  ): Promise<EffectivePolicy> {
    await this.requireOrganization(organizationId);
    await this.deps.repo.setPolicy(organizationId, keepDays, keepFailedDays);
    return this.policy(organizationId);
  }

  /** Creates or updates the Temporal Schedule (worker start). */
  ensureSchedule(): Promise<void> {
    return this.deps.schedule.ensure(this.deps.settings.intervalMinutes);
  }

  /**
   * One batch of the scheduled purge: up to retention.batchSize expired cases
   * and generation runs together, organization by organization.
   */
  async purgeBatch(): Promise<PurgeBatch> {
    const { batchSize } = this.deps.settings;
    const now = Date.now();
    const batch: PurgeBatch = { cases: 0, generationRuns: 0, rows: 0, more: false };
    const room = () => batchSize - batch.cases - batch.generationRuns;
    for (const organization of await this.deps.tenancy.listOrganizations()) {
      if (room() <= 0) {
        batch.more = true;
        break;
      }
      const policy = await this.policy(organization.id);
      const cutoff = (days: number | null) => (days === null ? null : new Date(now - days * DAY_MS).toISOString());
      const [endedBefore, failedEndedBefore] = [
        cutoff(policy.keepDays),
        cutoff(policy.keepFailedDays ?? policy.keepDays),
      ];
      const caseRoom = room();
      const ids = await this.deps.repo.expiredCases(organization.id, endedBefore, failedEndedBefore, caseRoom);
      batch.rows += await this.erase(ids, 'retention');
      batch.cases += ids.length;
      const runRoom = room();
      const runs = await this.deps.repo.purgeGenerationRuns(organization.id, endedBefore, failedEndedBefore, runRoom);
      batch.generationRuns += runs;
      batch.rows += runs;
      this.rowsDeleted.inc(runs);
      if (ids.length === caseRoom || (runRoom > 0 && runs === runRoom)) batch.more = true;
    }
    return batch;
  }

  /**
   * After a run: SQLite gives freed pages back, a step at a time (switching an
   * older database to incremental auto-vacuum once, with a full VACUUM);
   * Postgres' autovacuum reuses the space by itself.
   */
  async reclaimSpace(): Promise<{ bytesReclaimed: number }> {
    let bytesReclaimed = 0;
    if (this.deps.dialect === 'sqlite') {
      if (await this.deps.repo.switchToIncrementalVacuum())
        this.deps.logger.warn('database switched to incremental auto-vacuum (one full VACUUM)');
      for (;;) {
        const step = await this.deps.repo.incrementalVacuum(VACUUM_PAGES);
        bytesReclaimed += step;
        if (step <= 0) break;
      }
    }
    this.bytesReclaimed.inc(bytesReclaimed);
    this.lastRun.set(Date.now() / 1000);
    this.deps.logger.info({ bytesReclaimed }, 'retention run finished');
    return { bytesReclaimed };
  }

  private async erase(caseIds: string[], reason: 'request' | 'retention'): Promise<number> {
    if (caseIds.length === 0) return 0;
    const erased = await this.deps.repo.eraseCases(caseIds);
    // The rows are gone first: a file whose bytes outlive a crash here is unreachable, never a dangling record.
    await this.deps.files.removeBytes(erased.storageKeys);
    this.rowsDeleted.inc(erased.rows);
    this.casesErased.inc({ reason }, caseIds.length);
    return erased.rows;
  }

  private defaults(): EffectivePolicy {
    const { keepDays, keepFailedDays } = this.deps.settings;
    return { keepDays, keepFailedDays, source: 'default', updatedAt: null };
  }

  private async requireOrganization(organizationId: string): Promise<void> {
    if (!(await this.deps.tenancy.findOrganization(organizationId)))
      throw DomainError.notFound(`Organization ${organizationId} does not exist`);
  }
}
