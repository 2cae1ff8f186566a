import { describe, expect, it } from "vitest";
import type { SpanExporter } from "./exporter.js";
import type { OtlpSpan } from "./otlp.js";
import { samplerOf } from "./setup.js";
import { currentTraceparent, keepAccepted, openScope, Span, takeAccepted, withSpan, type Tracer } from "./spans.js";

/** An exporter that keeps what it is given, to read the spans a tracer ends. */
function keeping(): SpanExporter & { spans: OtlpSpan[] } {
  const spans: OtlpSpan[] = [];
  return { spans, add: (_service, span) => void spans.push(span), flush: async () => {}, stop: async () => {}, queued: 0, dropped: 0 };
}

const parent = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true };

describe("samplers", () => {
  it("follow the caller's flag when parent-based, and sample new traces as named", () => {
    const on = samplerOf("parentbased_always_on", 1);
    const off = samplerOf("parentbased_always_off", 1);
    expect([on(parent, parent.traceId), on({ ...parent, sampled: false }, parent.traceId), on(undefined, parent.traceId)]).toEqual([true, false, true]);
    expect([off(parent, parent.traceId), off(undefined, parent.traceId)]).toEqual([true, false]);
    expect(samplerOf("always_off", 1)(parent, parent.traceId)).toBe(false);
    expect(samplerOf("always_on", 1)({ ...parent, sampled: false }, parent.traceId)).toBe(true);
  });

  it("keep about the ratio of new traces, by their ids", () => {
    const sample = samplerOf("traceidratio", 0.25);
    let kept = 0;
    for (let n = 0; n < 4000; n++) if (sample(undefined, new Span({ service: "s", exporter: keeping(), sampler: () => false }, "x", "server", undefined).context.traceId)) kept++;
    expect(kept).toBeGreaterThan(800);
    expect(kept).toBeLessThan(1200);
    // The same trace is kept or not the same way in every process.
    expect(sample(undefined, "0".repeat(18) + "f".repeat(14))).toBe(false);
    expect(sample(undefined, "f".repeat(18) + "0".repeat(13) + "1")).toBe(true);
  });
});

describe("spans", () => {
  it("export a recorded span once, with its parent, attributes and error", () => {
    const exporter = keeping();
    const tracer: Tracer = { service: "router", exporter, sampler: () => true };
    const span = new Span(tracer, "POST", "server", parent, "vendor=opaque");
    span.set("http.response.status_code", 502).set("skipped", undefined).rename("POST /api/v1/chat");
    span.end("502");
    span.end();
    expect(exporter.spans).toHaveLength(1);
    expect(exporter.spans[0]).toMatchObject({
      traceId: parent.traceId,
      parentSpanId: parent.spanId,
      traceState: "vendor=opaque",
      name: "POST /api/v1/chat",
      kind: 2,
      attributes: [{ key: "http.response.status_code", value: { intValue: "502" } }],
      status: { code: 2, message: "502" },
    });
    expect(span.traceparent).toBe(`00-${parent.traceId}-${span.context.spanId}-01`);
    expect(BigInt(exporter.spans[0]!.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(exporter.spans[0]!.startTimeUnixNano));
  });

  it("pass on a trace they do not record, flagged as not sampled, and export nothing", () => {
    const exporter = keeping();
    const span = new Span({ service: "router", exporter, sampler: samplerOf("parentbased_always_on", 1) }, "GET", "server", { ...parent, sampled: false });
    span.set("url.path", "/x").end();
    expect(span.recording).toBe(false);
    expect(span.traceparent).toMatch(new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-00$`));
    expect(exporter.spans).toHaveLength(0);
  });

  it("make the current span the one outgoing calls name, and end an accepted attempt with the request", () => {
    const exporter = keeping();
    const tracer: Tracer = { service: "inference", exporter, sampler: () => true };
    const request = new Span(tracer, "POST", "server", parent);
    expect(currentTraceparent()).toBeUndefined();
    const { close } = openScope(request, () => {
      expect(currentTraceparent()).toBe(request.traceparent);
      const attempt = request.child("chat ok", "client");
      withSpan(attempt, () => expect(currentTraceparent()).toBe(attempt.traceparent));
      keepAccepted(attempt);
      const second = request.child("chat ok", "client");
      keepAccepted(second);
      // A second accepted attempt ends the first; the last is the generation's to end, or the request's.
      expect(exporter.spans).toHaveLength(1);
      expect(takeAccepted()).toBe(second);
      keepAccepted(second);
    });
    close();
    expect(exporter.spans.map((s) => s.kind)).toEqual([3, 3]);
    expect(exporter.spans.every((s) => s.parentSpanId === request.context.spanId)).toBe(true);
  });
});
