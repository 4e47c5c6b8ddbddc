import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl, type LogFormat, type Logger } from '../../src/logging/logger.js';

/** The service's logger, writing into a string we can search. */
function capturingLogger(format: LogFormat = 'json'): { logger: Logger; output: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger('info', {}, format, sink), output: () => lines.join('') };
}

describe('structured logs', () => {
  it('redacts keys, tokens and credential data before a line is written', () => {
    const { logger, output } = capturingLogger();
    logger.info({
      req: { headers: { 'x-service-key': 'cf_abc_secret1', authorization: 'Bearer cf_abc_secret2' } },
      connection: { credentialData: { api_token: 'secret3' }, clientSecret: 'secret4' },
      oauth: { accessToken: 'secret5', refreshToken: 'secret6' },
    });
    expect(JSON.parse(output())).toMatchObject({
      req: { headers: { 'x-service-key': '[redacted]', authorization: '[redacted]' } },
    });
    for (const secret of ['secret1', 'secret2', 'secret3', 'secret4', 'secret5', 'secret6'])
      expect(output()).not.toContain(secret);
  });

  it('redacts credential-carrying query parameters in logged URLs and queries', () => {
    expect(redactUrl('/api/v1/file/upload/abc?expires=123&signature=deadbeef')).toBe(
      '/api/v1/file/upload/abc?expires=123&signature=[redacted]',
    );
    expect(redactUrl('/oauth/callback?code=xyz&state=s3cret#frag')).toBe(
      '/oauth/callback?code=[redacted]&state=[redacted]#frag',
    );
    expect(redactUrl('/api/v1/case/1/status')).toBe('/api/v1/case/1/status');
    const { logger, output } = capturingLogger();
    logger.info({ req: { query: { signature: 'deadbeef', expires: '1' } } });
    expect(output()).not.toContain('deadbeef');
  });

  it('writes one readable line per event in the pretty format, redacted the same way', () => {
    const { logger, output } = capturingLogger('pretty');
    logger.info({ caseId: 'c-1', req: { headers: { 'x-service-key': 'cf_abc_secret7' } } }, 'case started');
    logger.warn('callback attempt failed');
    const lines = output().trim().split('\n');
    expect(lines[0]).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: case started$/);
    expect(output()).toContain('caseId: "c-1"');
    expect(output()).toMatch(/WARN: callback attempt failed/);
    expect(output()).not.toContain('secret7');
    expect(() => JSON.parse(lines[0] ?? '')).toThrow();
  });
});
