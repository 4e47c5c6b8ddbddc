import { finished, Transform, type TransformCallback } from 'node:stream';
import { createInflateRaw, createUnzip, type InflateRaw, type Unzip } from 'node:zlib';

/**
 * Whether a `deflate` body opens as zlib-wrapped (RFC 1950) or gzip: a zlib CMF byte (method 8, window ≤ 32 KB)
 * or gzip's first magic byte. Anything else is read as raw deflate (RFC 1951), which many servers send under that
 * label and browsers accept; a raw stream opening like a CMF byte would be a stored block with non-zero padding.
 */
const wrapped = (first: number): boolean => first === 0x1f || ((first & 0x0f) === 8 && first >> 4 <= 7);

/**
 * Undoes `content-encoding: deflate` whichever deflate it is, choosing the inflater by the body's first byte.
 * An empty body ends empty; bytes after a complete deflate stream are ignored (the inflater's own rule: the answer
 * is what it decoded).
 */
export class InflateEither extends Transform {
  private inner: Unzip | InflateRaw | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const first = chunk[0];
    if (first === undefined) {
      done();
      return;
    }
    (this.inner ?? this.open(first)).write(chunk, (err) => done(err ?? undefined));
  }

  override _flush(done: TransformCallback): void {
    if (this.inner === undefined) {
      done();
      return;
    }
    // Our end waits for the inflater's last bytes (and passes its error on), so nothing it decodes is lost.
    finished(this.inner, (err) => done(err ?? undefined));
    this.inner.end();
  }

  override _read(size: number): void {
    // Our reader wants more: let the inflater go on if our buffer had paused it.
    this.inner?.resume();
    super._read(size);
  }

  override _destroy(err: Error | null, done: (error?: Error | null) => void): void {
    // A cut answer (its cap reached, its connection dropped) stops the inflater too: no bomb inflated in the dark.
    this.inner?.destroy();
    done(err);
  }

  private open(first: number): Unzip | InflateRaw {
    const inner = wrapped(first) ? createUnzip() : createInflateRaw();
    inner.on('data', (out: Buffer) => {
      if (!this.push(out)) inner.pause();
    });
    inner.on('error', (err) => this.destroy(err));
    this.inner = inner;
    return inner;
  }
}
