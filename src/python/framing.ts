/** Length-prefixed JSON frames (4-byte big-endian length), as runner_server.py speaks. */
export function encodeFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
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
    const first = this.chunks[0]!;
    return (first.length >= 4 ? first : Buffer.concat(this.chunks, 4)).readUInt32BE(0);
  }

  /** Removes and returns the next n buffered bytes, copying only what n spans. */
  private take(n: number): Buffer {
    const parts: Buffer[] = [];
    let need = n;
    while (need > 0) {
      const head = this.chunks[0]!;
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
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
  }
}

function decodeBody(body: Buffer): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown;
  } catch (err) {
    return { bad: true, message: err instanceof Error ? err.message : String(err) } satisfies BadFrame;
  }
}
