import type SQLite from 'better-sqlite3';

/**
 * The embedded server's rows of a filled run that carry its ids inside their protobuf blobs (bench-fill.ts):
 * the mutable state, the current execution and the history tree name the run and its workflow inside `data`
 * and `state`, and a retention timer (`timer_tasks`, a `TimerTaskInfo`) names them, its history branch, its
 * task id and its time. A copy that kept the template's ids there would be deleted as the template: the
 * server deletes the history branch its mutable state names.
 */

type Row = Record<string, unknown>;

/** `temporal.server.api.enums.v1.TaskType`'s DeleteHistoryEvent: the retention timer of a closed run. */
const DELETE_HISTORY_EVENT = 16n;

/** `TimerTaskInfo`'s fields this file reads or replaces (temporal/server/api/persistence/v1/executions.proto). */
const timerField = { runId: 3, taskType: 4, visibilityTime: 11 } as const;

/** Ids as the server writes them in its blobs: a run id as text, the 16 bytes of its columns. */
export function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A time as the server's SQLite store writes its columns. */
export const temporalTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '+00:00');

/** A template's ids and a copy's: each pair of the same length, so every length inside the blob stays true. */
export type IdSwaps = ReadonlyArray<readonly [from: string, to: string]>;

/** The blob with every occurrence of each swap's `from` replaced by its `to`, at any depth of nesting. */
export function withIds(blob: Buffer, swaps: IdSwaps): Buffer {
  const out = Buffer.from(blob);
  for (const [from, to] of swaps) {
    if (from.length !== to.length) throw new Error(`bench fill: ${to} does not have the length of ${from}`);
    const needle = Buffer.from(from);
    const replacement = Buffer.from(to);
    for (let at = out.indexOf(needle); at >= 0; at = out.indexOf(needle, at + needle.length)) {
      replacement.copy(out, at);
    }
  }
  return out;
}

function varint(value: bigint): Buffer {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

function readVarint(blob: Buffer, at: number): { value: bigint; next: number } {
  let value = 0n;
  for (let i = at, shift = 0n; i < blob.length; i++, shift += 7n) {
    const byte = blob[i] ?? 0;
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new Error('bench fill: a protobuf varint runs past its blob');
}

interface Field {
  number: number;
  /** The whole field, its tag included. */
  start: number;
  end: number;
  /** A varint's value, or where a length-delimited field's bytes start. */
  value: bigint;
  bodyStart: number;
}

/** The top-level fields of a protobuf message (varints, 64- and 32-bit values, length-delimited). */
function fieldsOf(blob: Buffer): Field[] {
  const fields: Field[] = [];
  for (let at = 0; at < blob.length;) {
    const tag = readVarint(blob, at);
    const number = Number(tag.value >> 3n);
    const wire = Number(tag.value & 7n);
    if (wire === 0) {
      const v = readVarint(blob, tag.next);
      fields.push({ number, start: at, end: v.next, value: v.value, bodyStart: tag.next });
      at = v.next;
    } else if (wire === 2) {
      const length = readVarint(blob, tag.next);
      const end = length.next + Number(length.value);
      fields.push({ number, start: at, end, value: length.value, bodyStart: length.next });
      at = end;
    } else if (wire === 1 || wire === 5) {
      const end = tag.next + (wire === 1 ? 8 : 4);
      fields.push({ number, start: at, end, value: 0n, bodyStart: tag.next });
      at = end;
    } else {
      throw new Error(`bench fill: protobuf wire type ${wire} is not read here`);
    }
  }
  return fields;
}

const varintField = (number: number, value: bigint) => Buffer.concat([varint(BigInt(number << 3)), varint(value)]);
const bytesField = (number: number, body: Buffer) =>
  Buffer.concat([varint(BigInt((number << 3) | 2)), varint(BigInt(body.length)), body]);

/** `google.protobuf.Timestamp`. */
function timestamp(at: Date): Buffer {
  const ms = at.getTime();
  return Buffer.concat([varintField(1, BigInt(Math.floor(ms / 1000))), varintField(2, BigInt((ms % 1000) * 1e6))]);
}

/** The message with the given top-level fields replaced (each must be there once), the others byte for byte. */
function replaceFields(blob: Buffer, replaced: ReadonlyMap<number, Buffer>): Buffer {
  const fields = fieldsOf(blob);
  for (const number of replaced.keys()) {
    if (fields.filter((f) => f.number === number).length !== 1) {
      throw new Error(`bench fill: the template's timer task does not hold field ${number} once`);
    }
  }
  return Buffer.concat(fields.map((f) => replaced.get(f.number) ?? blob.subarray(f.start, f.end)));
}

/** The run each retention timer of `timer_tasks` deletes, by run id (text). */
export function retentionTimers(db: SQLite.Database): Map<string, Row> {
  const timers = new Map<string, Row>();
  for (const row of db.prepare('select * from timer_tasks').all() as Row[]) {
    const data = row.data as Buffer;
    const fields = fieldsOf(data);
    if (fields.find((f) => f.number === timerField.taskType)?.value !== DELETE_HISTORY_EVENT) continue;
    const run = fields.find((f) => f.number === timerField.runId);
    if (run) timers.set(data.subarray(run.bodyStart, run.end).toString(), row);
  }
  return timers;
}

/**
 * The columns of a copy of a template run's retention timer for the copy `swaps` names (its history branch is
 * the copy's tree with the template's branch id, as its history_tree rows are), due at `due`: the
 * `visibility_timestamp` column and the blob's `visibility_time` agree. The task id stays the template's: the
 * server skips a task older than the run's task generation (`TaskGenerationShardClockTimestamp`, which the
 * copy's mutable state keeps) and reloads the shard for one newer than its clock; the template's lies between.
 */
export function retentionTimerOf(template: Row, swaps: IdSwaps, due: Date): Row {
  const data = replaceFields(
    withIds(template.data as Buffer, swaps),
    new Map([[timerField.visibilityTime, bytesField(timerField.visibilityTime, timestamp(due))]]),
  );
  return { data, visibility_timestamp: temporalTime(due) };
}
