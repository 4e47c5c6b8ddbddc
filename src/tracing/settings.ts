/** Where spans go, read from the standard OpenTelemetry variables; absent when tracing is off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces endpoint spans are POSTed to (as JSON). */
  url: string;
  /** Sent with every export (an API key of the collector, say); never logged. */
  headers: Record<string, string>;
  /** The resource's service.name. */
  serviceName: string;
}

/**
 * `key=value,key2=value2` with URL-encoded values (OTEL_EXPORTER_OTLP_HEADERS); a pair without `=` is
 * ignored, as the specification asks.
 */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/**
 * Off unless an OTLP endpoint is set, and off whatever is set when OTEL_SDK_DISABLED is true or
 * OTEL_TRACES_EXPORTER names no `otlp` exporter (`none`). The signal-specific variables win over the
 * general ones; the general endpoint gets `/v1/traces` appended, the specific one is used as is.
 */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim().toLowerCase());
  if (exporters && !exporters.includes('otlp')) return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  return {
    url,
    headers: {
      ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
      ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'caseflow',
  };
}
