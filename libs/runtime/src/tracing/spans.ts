import { AsyncLocalStorage } from "node:async_hooks";
import type { SpanExporter } from "./exporter.js";
import { otlpAttribute, spanKind, unixNanos, type OtlpAttribute, type OtlpSpan } from "./otlp.js";
import { formatTraceparent, newSpanId, newTraceId, type SpanContext } from "./traceparent.js";

/** Whether a new trace (no parent) or a span under `parent` is recorded; `traceId` is the trace's. */
export type Sampler = (parent: SpanContext | undefined, traceId: string) => boolean;

/** One service's spans: where they go, under which `service.name`, and which traces are recorded. */
export interface Tracer {
  service: string;
  exporter: SpanExporter;
  sampler: Sampler;
}

export type SpanKind = keyof typeof spanKind;

/**
 * One operation of a trace. A span that is not sampled still has its ids, so the trace goes on through the
 * services and providers it calls, but it keeps no attributes and is never exported.
 */
export class Span {
  readonly context: SpanContext;
  readonly traceparent: string;
  private readonly record: OtlpSpan | undefined;
  private readonly started = performance.now();
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    name: string,
    kind: SpanKind,
    parent: SpanContext | undefined,
    traceState?: string,
  ) {
    const traceId = parent?.traceId ?? newTraceId();
    this.context = { traceId, spanId: newSpanId(), sampled: tracer.sampler(parent, traceId) };
    this.traceparent = formatTraceparent(this.context);
    if (!this.context.sampled) return;
    this.record = {
      traceId,
      spanId: this.context.spanId,
      ...(parent ? { parentSpanId: parent.spanId } : {}),
      ...(traceState ? { traceState } : {}),
      name,
      kind: spanKind[kind],
      startTimeUnixNano: unixNanos(performance.timeOrigin + this.started),
      endTimeUnixNano: "",
      attributes: [],
    };
  }

  get recording(): boolean {
    return this.record !== undefined && !this.ended;
  }

  /** Sets an attribute; undefined values are left out. */
  set(key: string, value: string | number | boolean | undefined): this {
    if (value === undefined || !this.record || this.ended) return this;
    const attributes: OtlpAttribute[] = this.record.attributes;
    const at = attributes.findIndex((a) => a.key === key);
    if (at >= 0) attributes[at] = otlpAttribute(key, value);
    else attributes.push(otlpAttribute(key, value));
    return this;
  }

  has(key: string): boolean {
    return this.record?.attributes.some((a) => a.key === key) ?? false;
  }

  rename(name: string): this {
    if (this.record && !this.ended) this.record.name = name;
    return this;
  }

  /** Ends the span (once; later calls do nothing), as an error when `error` says why. */
  end(error?: string): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.record) return;
    this.record.endTimeUnixNano = unixNanos(performance.timeOrigin + performance.now());
    if (error !== undefined) this.record.status = { code: 2, message: error };
    this.tracer.exporter.add(this.tracer.service, this.record);
  }

  /** A span under this one, in the same service. */
  child(name: string, kind: SpanKind): Span {
    return new Span(this.tracer, name, kind, this.context);
  }
}

/**
 * What the code running for a request is within: its span, and the provider attempt that was accepted and
 * goes on (a stream) until its generation is recorded with its usage.
 */
interface TraceScope {
  span: Span;
  accepted?: Span;
}

const scopes = new AsyncLocalStorage<TraceScope>();

/** The span of the code running now: undefined outside a traced request, and whenever tracing is off. */
export const currentSpan = (): Span | undefined => scopes.getStore()?.span;

/** The `traceparent` an outgoing call carries: the current span's; undefined when there is none. */
export const currentTraceparent = (): string | undefined => scopes.getStore()?.span.traceparent;

/** Runs `fn` with `span` current: calls it makes carry it and spans it starts are its children. */
export const withSpan = <T>(span: Span, fn: () => T): T => scopes.run({ span }, fn);

/**
 * Keeps an accepted provider attempt's span open until its generation says how it ended (`takeAccepted`), or
 * the request's span ends. A span accepted before it and still open is ended first.
 */
export function keepAccepted(span: Span): void {
  const scope = scopes.getStore();
  if (!scope) return span.end();
  scope.accepted?.end();
  scope.accepted = span;
}

/** Takes the accepted attempt's span of the current request, for its generation to end; undefined when none. */
export function takeAccepted(): Span | undefined {
  const scope = scopes.getStore();
  const span = scope?.accepted;
  if (scope) scope.accepted = undefined;
  return span;
}

/** Runs `fn` as the handling of `span`: when `fn`'s work ends, call the returned function to end what is left. */
export function openScope<T>(span: Span, fn: () => T): { result: T; close: () => void } {
  const scope: TraceScope = { span };
  const result = scopes.run(scope, fn);
  return {
    result,
    close: () => {
      scope.accepted?.end();
      scope.accepted = undefined;
    },
  };
}

/**
 * Names the route of the current request's span, for handlers outside express. When the answer ends,
 * express's matched route names only a span that has none: in one process the router and its service share
 * the request object, and the router's span keeps its own route.
 */
export function noteRoute(method: string | undefined, route: string): void {
  const span = currentSpan();
  if (span?.recording) span.set("http.route", route).rename(`${method ?? "GET"} ${route}`);
}
