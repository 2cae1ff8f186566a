import { randomBytes } from "node:crypto";

/** Where a span sits in its trace: what a W3C `traceparent` header carries. */
export interface SpanContext {
  /** 32 lower-case hex characters, never all zeros. */
  traceId: string;
  /** 16 lower-case hex characters, never all zeros. */
  spanId: string;
  /** The sampled flag: the caller records this trace and asks us to record it too. */
  sampled: boolean;
}

export const traceparentHeader = "traceparent";
export const tracestateHeader = "tracestate";

const zeroTrace = "0".repeat(32);
const zeroSpan = "0".repeat(16);
// version-traceid-parentid-flags; a later version may append fields after a dash (W3C Trace Context §3.2.4).
const shape = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A `traceparent` header as W3C Trace Context reads it: version 00 exactly (55 characters), a later version
 * by its first four fields, never version ff, upper-case hex, or an all-zero id. Anything else is undefined,
 * and the request starts a trace of its own.
 */
export function parseTraceparent(value: string | string[] | undefined): SpanContext | undefined {
  if (typeof value !== "string" || value.length < 55 || value.length > 512) return undefined;
  const match = shape.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === zeroTrace || spanId === zeroSpan) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

export const formatTraceparent = (context: SpanContext): string => `00-${context.traceId}-${context.spanId}-${context.sampled ? "01" : "00"}`;

/** A random id of `bytes` bytes in hex; all zeros is the invalid id (once in 2^64 draws) and is drawn again. */
function randomHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString("hex");
    if (/[^0]/.test(hex)) return hex;
  }
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);
