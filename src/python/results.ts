import { PythonPoolBusy } from './call-queue.js';
import type { RawResponse } from './runner-process.js';
import type { PythonErrorKind, PythonLogEntry, PythonRunError, PythonRunResult, ScanViolation } from './types.js';

const KINDS: readonly PythonErrorKind[] = ['timeout', 'error', 'limit', 'sandbox', 'output'];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function logs(v: unknown): PythonLogEntry[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isRecord).map((e) => ({
    level: (['debug', 'info', 'warning', 'error'] as const).find((l) => l === e.level) ?? 'info',
    message: str(e.message),
    at: str(e.at),
  }));
}

/** Maps a server frame (or a transport failure) onto the public result union. */
export function toRunResult(raw: RawResponse | Error, durationMs: number): PythonRunResult {
  if (raw instanceof Error) {
    return {
      ok: false,
      error: transportError(raw),
      logs: [],
      stdout: '',
      stderr: '',
      durationMs,
    };
  }
  const common = { logs: logs(raw.logs), stdout: str(raw.stdout), stderr: str(raw.stderr), durationMs };
  if (raw.ok && isRecord(raw.outputs)) return { ok: true, outputs: raw.outputs, ...common };
  const e = isRecord(raw.error) ? raw.error : {};
  const kind = KINDS.find((k) => k === e.kind) ?? 'error';
  const error: PythonRunError = {
    kind,
    message: str(e.message) || 'the Python call failed',
  };
  if (typeof e.traceback === 'string') error.traceback = e.traceback;
  return { ok: false, error, ...common };
}

function transportError(err: Error): PythonRunError {
  if (!(err instanceof PythonPoolBusy)) return { kind: 'sandbox', message: err.message };
  if (err.reason === 'cancelled') return { kind: 'cancelled', message: err.message };
  return { kind: 'busy', message: err.message, retryAfterMs: err.retryAfterMs };
}

export function toViolations(raw: RawResponse | Error): ScanViolation[] {
  if (raw instanceof Error || !raw.ok || !Array.isArray(raw.violations)) {
    const why = raw instanceof Error ? raw.message : isRecord(raw.error) ? str(raw.error.message) : 'no result';
    return [{ line: 1, col: 1, message: `source could not be scanned: ${why}` }];
  }
  return raw.violations.filter(isRecord).map((v) => ({
    line: typeof v.line === 'number' ? v.line : 1,
    col: typeof v.col === 'number' ? v.col : 1,
    message: str(v.message),
  }));
}
