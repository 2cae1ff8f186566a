import { describe, expect, it } from "vitest";
import { formatTraceparent, newSpanId, newTraceId, parseTraceparent } from "./traceparent.js";

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const spanId = "00f067aa0ba902b7";

describe("parseTraceparent", () => {
  it("reads a version 00 header, sampled or not", () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, sampled: true });
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)).toEqual({ traceId, spanId, sampled: false });
    // Other flag bits are not ours to read; the sampled bit alone counts.
    expect(parseTraceparent(`00-${traceId}-${spanId}-03`)).toEqual({ traceId, spanId, sampled: true });
  });

  it("reads the first four fields of a later version, extra fields included", () => {
    expect(parseTraceparent(`01-${traceId}-${spanId}-01-what-comes-next`)).toEqual({ traceId, spanId, sampled: true });
    expect(parseTraceparent(`cc-${traceId}-${spanId}-00`)).toEqual({ traceId, spanId, sampled: false });
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["sent twice", [`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`]],
    ["all-zero trace id", `00-${"0".repeat(32)}-${spanId}-01`],
    ["all-zero span id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${traceId}-${spanId}-01`],
    ["version 00 with extra fields", `00-${traceId}-${spanId}-01-extra`],
    ["upper-case hex", `00-${traceId.toUpperCase()}-${spanId}-01`],
    ["short trace id", `00-${traceId.slice(1)}-${spanId}-01`],
    ["long span id", `00-${traceId}-${spanId}0-01`],
    ["non-hex", `00-${traceId.replace("4", "g")}-${spanId}-01`],
    ["wrong separators", `00_${traceId}_${spanId}_01`],
    ["one-digit flags", `00-${traceId}-${spanId}-1`],
    ["huge", `01-${traceId}-${spanId}-01-${"x".repeat(600)}`],
    ["garbage", "not a traceparent at all, just words in a header"],
  ])("treats %s as no parent", (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("writes what it reads", () => {
    const context = { traceId, spanId, sampled: true };
    expect(formatTraceparent(context)).toBe(`00-${traceId}-${spanId}-01`);
    expect(parseTraceparent(formatTraceparent({ ...context, sampled: false }))).toEqual({ ...context, sampled: false });
  });

  it("draws new ids of the right shape, different each time", () => {
    const traces = new Set(Array.from({ length: 200 }, () => newTraceId()));
    const spans = new Set(Array.from({ length: 200 }, () => newSpanId()));
    expect(traces.size).toBe(200);
    expect(spans.size).toBe(200);
    for (const id of traces) expect(id).toMatch(/^[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });
});
