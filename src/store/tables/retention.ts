/** An organization's retention policy; without a row the configured defaults apply. */
export interface RetentionPolicyTable {
  organization_id: string;
  /** Ended cases are erased this many days after they ended; null: kept. */
  keep_days: number | null;
  /** FAILED and TIMED_OUT cases: this many days; null: as keep_days. */
  keep_failed_days: number | null;
  updated_at: string;
}

export interface RetentionTables {
  retention_policies: RetentionPolicyTable;
}
