import express, { type RequestHandler } from 'express';
import { DomainError } from '../errors.js';
import { bodyParserError } from './errors.js';
import { assertJsonDepth } from './json-depth.js';

/**
 * A JSON body that could not be read: malformed, over the size limit or
 * nested too deep. Its error is answered where the route reads the body, so
 * the key (401) and the permission checks the contract puts before the body
 * (403) still come first.
 */
export class UnreadableBody {
  constructor(readonly error: DomainError) {}
}

/** The body as sent; throws its read error when it could not be read. */
export function readableBody(body: unknown): unknown {
  if (body instanceof UnreadableBody) throw body.error;
  return body;
}

function depthError(body: unknown): DomainError | undefined {
  try {
    // Before any handler hashes, validates or copies the body recursively.
    assertJsonDepth(body, 'body');
    return undefined;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

/** Runs a body-parser, leaving an UnreadableBody (with `check`'s error too) where the body cannot be used. */
function tolerant(parse: RequestHandler, check: (body: unknown) => DomainError | undefined): RequestHandler {
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err) {
        const error = bodyParserError(err);
        if (!error) {
          next(err);
          return;
        }
        req.body = new UnreadableBody(error);
      } else {
        const error = check(req.body);
        if (error) req.body = new UnreadableBody(error);
      }
      next();
    });
  };
}

/** express.json plus the depth bound, leaving an UnreadableBody where the body cannot be used instead of answering early. */
export function jsonBodies(options: Parameters<typeof express.json>[0]): RequestHandler {
  return tolerant(express.json(options), depthError);
}

/** The bytes of any body up to `limitBytes` (a Buffer in req.body), for routes that verify a signature over them. */
export function rawBodies(limitBytes: number): RequestHandler {
  return tolerant(express.raw({ type: () => true, limit: limitBytes }), () => undefined);
}

/** A body read by rawBodies: its bytes (none when it had no body); throws its read error (413). */
export function rawBytes(body: unknown): Buffer {
  const readable = readableBody(body);
  return Buffer.isBuffer(readable) ? readable : Buffer.alloc(0);
}
