/**
 * Request counters in fixed windows, shared by every API process: one row per
 * counter (`bucket`, e.g. a case's redeliveries) and window. `expires_at`
 * (epoch ms) is when the window ends, so one prune serves limits of any
 * window length.
 */
export interface RateLimitWindowTable {
  bucket: string;
  window_start: number;
  hits: number;
  expires_at: number;
}

export interface RateLimitTables {
  rate_limit_windows: RateLimitWindowTable;
}
