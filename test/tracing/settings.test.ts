import { describe, expect, it } from 'vitest';
import { tracingSettings } from '../../src/tracing/settings.js';

describe('tracing settings from the OTEL_* variables', () => {
  it('is off without an endpoint', () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_SERVICE_NAME: 'svc', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBeUndefined();
  });

  it('appends /v1/traces to the general endpoint and takes the traces endpoint as is', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      url: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'caseflow',
    });
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/ingest',
        OTEL_SERVICE_NAME: 'caseflow-eu',
      }),
    ).toMatchObject({ url: 'https://traces.example/ingest', serviceName: 'caseflow-eu' });
  });

  it('reads URL-encoded headers, the traces ones winning per key, pairs without = ignored', () => {
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=general%20key, x-team = core ,broken',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=traces%3Dkey',
      })?.headers,
    ).toEqual({ 'api-key': 'traces=key', 'x-team': 'core' });
  });

  it('is off whatever endpoint is set when the SDK is disabled or no otlp exporter is named', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' })).toBeDefined();
    expect(tracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'console,otlp' })).toBeDefined();
  });
});
