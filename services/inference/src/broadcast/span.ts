import { createHash } from "node:crypto";
import type { EventEnvelope } from "@switchyard/contracts";
import { otlpAttribute as attribute, type OtlpSpan } from "@switchyard/runtime";

/** The events that describe a finished generation: chat completions, embeddings and rerank; transcriptions, images and speech. */
export const broadcastSubjects = ["inference.generation.completed.v1", "media.transcription.completed.v1", "media.image.completed.v1", "media.speech.completed.v1"] as const;
export type Completed = EventEnvelope<(typeof broadcastSubjects)[number]>;

/** The GenAI operation of each: `chat` is the conventions' own name; media's have none, so they say what they are. */
const operations = {
  "inference.generation.completed.v1": "chat",
  "media.transcription.completed.v1": "transcription",
  "media.image.completed.v1": "image_generation",
  "media.speech.completed.v1": "speech",
} as const;

/** The tracing keys the spec names; every other key of `trace` passes through as it came. */
const known = new Set(["trace_id", "trace_name", "span_name", "generation_name", "parent_span_id"]);

const hex = (value: unknown, length: number) => (typeof value === "string" && new RegExp(`^[0-9a-f]{${length}}$`).test(value.toLowerCase()) ? value.toLowerCase() : undefined);
const derived = (seed: string, length: number) => createHash("sha256").update(seed).digest("hex").slice(0, length);

/** What every destination is told of one generation. */
export function broadcastRecord(event: Completed) {
  const d = event.data;
  // One envelope type over three subjects does not narrow by subject; media's payload is chat's plus its units.
  const media = event.subject === "inference.generation.completed.v1" ? undefined : (d as EventEnvelope<"media.image.completed.v1">["data"]);
  const trace = d.trace ?? {};
  const ended = new Date(event.occurred_at).getTime();
  return {
    type: "generation",
    // Inference's generations are chat completions unless they say they are embeddings or rerank.
    operation: (event.subject === "inference.generation.completed.v1" ? d.operation : undefined) ?? operations[event.subject],
    generation_id: d.generation_id,
    trace_id: typeof trace.trace_id === "string" ? trace.trace_id : null,
    trace_name: typeof trace.trace_name === "string" ? trace.trace_name : null,
    span_name: typeof trace.span_name === "string" ? trace.span_name : null,
    generation_name: typeof trace.generation_name === "string" ? trace.generation_name : null,
    parent_span_id: typeof trace.parent_span_id === "string" ? trace.parent_span_id : null,
    metadata: Object.fromEntries(Object.entries(trace).filter(([k]) => !known.has(k))),
    organization_id: d.organization_id,
    workspace_id: d.workspace_id,
    model: d.model,
    provider: d.provider,
    status: d.status,
    finish_reason: d.finish_reason ?? null,
    streamed: d.streamed,
    usage: {
      prompt_tokens: d.prompt_tokens,
      completion_tokens: d.completion_tokens,
      total_tokens: d.prompt_tokens + d.completion_tokens,
      estimated: d.usage_estimated,
      ...(media?.seconds !== undefined ? { seconds: media.seconds } : {}),
      ...(media?.images !== undefined ? { images: media.images } : {}),
      ...(media?.characters !== undefined ? { characters: media.characters } : {}),
    },
    cost_usd: Number(d.cost_usd),
    started_at: new Date(ended - (d.generation_time_ms ?? 0)).toISOString(),
    ended_at: event.occurred_at,
  };
}
export type BroadcastRecord = ReturnType<typeof broadcastRecord>;

/**
 * One OTLP/JSON span per generation, with the GenAI semantic conventions' attributes. A `trace_id` or
 * `parent_span_id` that is not OTLP's hex form is kept as an attribute, and the ids are derived instead.
 */
export function otlpSpan(record: BroadcastRecord): OtlpSpan {
  const traceId = hex(record.trace_id, 32) ?? derived(record.trace_id ?? record.generation_id, 32);
  const parent = hex(record.parent_span_id, 16);
  const toNanos = (iso: string) => `${BigInt(new Date(iso).getTime()) * 1_000_000n}`;
  const attributes = [
    attribute("gen_ai.operation.name", record.operation),
    attribute("gen_ai.request.model", record.model),
    attribute("gen_ai.response.model", record.model),
    attribute("gen_ai.system", record.provider ?? "unknown"),
    attribute("gen_ai.usage.input_tokens", record.usage.prompt_tokens),
    attribute("gen_ai.usage.output_tokens", record.usage.completion_tokens),
    attribute("switchyard.generation_id", record.generation_id),
    attribute("switchyard.cost_usd", record.cost_usd),
    attribute("switchyard.workspace_id", record.workspace_id),
    attribute("switchyard.status", record.status),
    ...(record.finish_reason ? [attribute("gen_ai.response.finish_reasons", record.finish_reason)] : []),
    ...(record.usage.seconds !== undefined ? [attribute("switchyard.usage.audio_seconds", record.usage.seconds)] : []),
    ...(record.usage.images !== undefined ? [attribute("switchyard.usage.images", record.usage.images)] : []),
    ...(record.usage.characters !== undefined ? [attribute("switchyard.usage.characters", record.usage.characters)] : []),
    ...(record.trace_id ? [attribute("switchyard.trace_id", record.trace_id)] : []),
    ...(record.trace_name ? [attribute("switchyard.trace_name", record.trace_name)] : []),
    ...(record.generation_name ? [attribute("switchyard.generation_name", record.generation_name)] : []),
    ...(record.parent_span_id && !parent ? [attribute("switchyard.parent_span_id", record.parent_span_id)] : []),
    ...Object.entries(record.metadata).map(([key, value]) => attribute(`switchyard.metadata.${key}`, value)),
  ];
  return {
    traceId,
    spanId: derived(record.generation_id, 16),
    ...(parent ? { parentSpanId: parent } : {}),
    name: record.span_name ?? record.generation_name ?? `${record.operation} ${record.model}`,
    kind: 3, // CLIENT: the gateway calls a model
    startTimeUnixNano: toNanos(record.started_at),
    endTimeUnixNano: toNanos(record.ended_at),
    attributes,
    status: record.status === "completed" ? { code: 1 } : { code: 2, message: record.status },
  };
}
