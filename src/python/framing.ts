/** Length-prefixed JSON frames (4-byte big-endian length), as runner_server.py speaks. */
export function encodeFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return Buffer.concat([uint32(body.length), body]);
}

/** A request frame as written: its parts (never joined, so file bytes are not copied) and its body size. */
export interface RequestFrame {
  parts: Uint8Array[];
  /** Bytes after the outer length prefix. */
  bodyBytes: number;
}

/**
 * A request frame: the outer length, the length of the JSON header, the
 * header, then the attachments' raw bytes back to back (the header says each
 * one's size). File bytes travel as they are, not as base64 text.
 */
export function encodeRequest(header: unknown, attachments: readonly Uint8Array[]): RequestFrame {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const bodyBytes = 4 + json.length + attachments.reduce((n, a) => n + a.length, 0);
  return { parts: [uint32(bodyBytes), uint32(json.length), json, ...attachments], bodyBytes };
}

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/** A frame whose body was not valid JSON: reported, not thrown, so one bad frame fails one call only. */
export interface BadFrame {
  bad: true;
  message: string;
}

/**
 * Accumulates stdout chunks and yields complete decoded frames. Chunks are kept as a list and
 * a frame's bytes are joined once, when it is complete, so a large frame arriving in many
 * chunks costs linear, not quadratic, copying.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private length = 0;

  push(chunk: Buffer): Array<unknown> {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const frames: unknown[] = [];
    for (;;) {
      if (this.length < 4) break;
      const size = this.peekSize();
      if (this.length < 4 + size) break;
      this.take(4);
      frames.push(decodeBody(this.take(size)));
    }
    return frames;
  }

  private peekSize(): number {
    const first = this.chunks[0];
    return (first && first.length >= 4 ? first : Buffer.concat(this.chunks, 4)).readUInt32BE(0);
  }

  /** Removes and returns the next n buffered bytes, copying only what n spans. */
  private take(n: number): Buffer {
    const parts: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const head = this.chunks[0];
      if (!head) throw new Error('FrameReader: fewer bytes buffered than taken');
      if (head.length <= need) {
        parts.push(head);
        this.chunks.shift();
        need -= head.length;
      } else {
        parts.push(head.subarray(0, need));
        this.chunks[0] = head.subarray(need);
        need = 0;
      }
    }
    this.length -= n;
    const [only] = parts;
    return parts.length === 1 && only ? only : Buffer.concat(parts, n);
  }
}

function decodeBody(body: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown;
  } catch (err) {
    return { bad: true, message: err instanceof Error ? err.message : String(err) } satisfies BadFrame;
  }
}
