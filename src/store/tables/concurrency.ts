/** An organization's own concurrency cap; without a row the configured default applies. */
export interface ConcurrencyLimitTable {
  organization_id: string;
  /** Cases running at once; null: no cap. */
  max_concurrent_cases: number | null;
  updated_at: string;
}

/** One row per organization, written first by every admission so admissions of one organization take turns. */
export interface AdmissionLockTable {
  organization_id: string;
  locked_at: string;
}

/** A process that runs case work: its event-loop utilization as it last published it (the fair share's gate). */
export interface ProcessLoadTable {
  process_id: string;
  /** 0..1, over the process's last ~1.5 s. */
  utilization: number;
  updated_at: string;
}

export interface ConcurrencyTables {
  concurrency_limits: ConcurrencyLimitTable;
  admission_locks: AdmissionLockTable;
  process_loads: ProcessLoadTable;
}
