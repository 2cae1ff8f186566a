/**
 * OTLP/HTTP with JSON bodies (the OpenTelemetry protocol's `/v1/traces`): the encoding shared by the
 * gateway's own spans and the generation spans inference broadcasts to a workspace's destinations.
 */

export interface OtlpAttribute {
  key: string;
  value: { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
}

/** OTLP span kinds (the protobuf enum's numbers, as OTLP/JSON writes them). */
export const spanKind = { internal: 1, server: 2, client: 3 } as const;

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  /** `code` 1 is OK, 2 is ERROR; absent is unset. */
  status?: { code: 1 | 2; message?: string };
}

/** One attribute; numbers are integers or doubles as they are, objects are written as JSON text. */
export const otlpAttribute = (key: string, value: unknown): OtlpAttribute =>
  typeof value === "number"
    ? { key, value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value } }
    : typeof value === "boolean"
      ? { key, value: { boolValue: value } }
      : { key, value: { stringValue: typeof value === "string" ? value : JSON.stringify(value) } };

/** Where to POST spans: `<endpoint>/v1/traces`, unless the endpoint names that path already. */
export const otlpTracesUrl = (endpoint: string): string => {
  const base = endpoint.replace(/\/+$/, "");
  return base.endsWith("/v1/traces") ? base : `${base}/v1/traces`;
};

/** An export request: the spans of each service (its `service.name` resource) under one instrumentation scope. */
export function otlpTracesBody(byService: ReadonlyMap<string, readonly OtlpSpan[]>, scope: string) {
  return {
    resourceSpans: [...byService].map(([serviceName, spans]) => ({
      resource: { attributes: [otlpAttribute("service.name", serviceName)] },
      scopeSpans: [{ scope: { name: scope }, spans }],
    })),
  };
}

/** Milliseconds since the epoch (fractions kept to the microsecond) as OTLP's decimal nanoseconds. */
export function unixNanos(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.round((ms - whole) * 1000);
  return micros >= 1000 ? `${whole + 1}000000` : `${whole}${String(micros * 1000).padStart(6, "0")}`;
}
