import { UpstreamError } from "@switchyard/upstream";
import type { z } from "zod";

/** What every event of OpenAI's media streams (images, speech) has: its type, and an error when it failed. */
interface StreamEvent {
  type: string;
  error?: { message?: string | null | undefined } | null | undefined;
}

/**
 * One `data:` payload of an OpenAI-style media stream, checked against `schema`. An event that does not
 * parse, or that reports an error, fails the stream mid-way (502: the answer has already begun).
 */
export function streamEvent<T extends StreamEvent>(data: string, schema: z.ZodType<T>, provider: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    raw = undefined;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UpstreamError(`${provider} sent an event that does not parse`, 502, false);
  const e = parsed.data;
  if (e.type === "error" || e.error) throw new UpstreamError(`${provider}: ${e.error?.message ?? "error mid-stream"}`, 502, false);
  return e;
}
