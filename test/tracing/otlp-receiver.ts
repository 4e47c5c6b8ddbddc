import { Receiver } from '../callbacks/receiver.js';

/** One span as OTLP/HTTP JSON carries it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  serviceName: unknown;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<Omit<ReceivedSpan, 'attributes' | 'serviceName'> & { attributes?: OtlpAttribute[] }>;
    }>;
  }>;
}

function plain(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  );
}

/**
 * An OTLP/HTTP collector in the test process: a real server (the callbacks' receiver) accepting
 * `POST /v1/traces` as JSON, the only encoding the service sends; `exports` holds every request it got.
 */
export class OtlpReceiver extends Receiver {
  readonly spans: ReceivedSpan[] = [];

  constructor() {
    super((call, res) => {
      if (call.method !== 'POST' || call.path !== '/v1/traces' || call.headers['content-type'] !== 'application/json') {
        res.writeHead(404).end();
        return;
      }
      for (const resourceSpans of (JSON.parse(call.body) as OtlpRequest).resourceSpans ?? []) {
        const serviceName = plain(resourceSpans.resource?.attributes)['service.name'];
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            this.spans.push({ ...span, attributes: plain(span.attributes), serviceName });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  }

  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  get base(): string {
    return new URL(this.url).origin;
  }

  get exports() {
    return this.received;
  }

  inTrace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }
}
