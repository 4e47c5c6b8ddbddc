/** Length-prefixed JSON frames (4-byte big-endian length), as runner_server.py speaks. */
export function encodeFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** Accumulates stdout chunks and yields complete decoded frames. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private length = 0;

  push(chunk: Buffer): unknown[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const frames: unknown[] = [];
    for (;;) {
      if (this.length < 4) break;
      let buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
      const size = buf.readUInt32BE(0);
      if (buf.length < 4 + size) {
        this.chunks = [buf];
        break;
      }
      frames.push(JSON.parse(buf.subarray(4, 4 + size).toString('utf8')) as unknown);
      buf = buf.subarray(4 + size);
      this.chunks = buf.length > 0 ? [buf] : [];
      this.length = buf.length;
    }
    return frames;
  }
}
