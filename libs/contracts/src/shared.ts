import { z } from "zod";
import { queryInt } from "./common.js";

/**
 * Longest model id taken: OpenRouter's run to about 70 characters, a provider's own model names (an ARN, a
 * path of an inference host) to about 150.
 */
export const maxModelIdLength = 256;

/** `<vendor>/<model>`, optionally with a variant suffix such as `:free`. */
export const modelId = z
  .string()
  .max(maxModelIdLength, `must be at most ${maxModelIdLength} characters`)
  .regex(/^[^\s/]+\/\S+$/, "must be a model identifier <vendor>/<model>");

/** Prices travel as decimal strings so no float rounding creeps into money. */
export const decimalString = z.string().regex(/^-?\d+(\.\d+)?$/, "must be a decimal string");

/** Groups related requests; the spec caps it at 256 characters. */
export const sessionId = z.string().max(256, "must be at most 256 characters");

/** Observability metadata; known keys are typed, anything else passes to broadcast destinations. */
export const traceConfig = z.looseObject({
  trace_id: z.string().optional(),
  trace_name: z.string().optional(),
  span_name: z.string().optional(),
  generation_name: z.string().optional(),
  parent_span_id: z.string().optional(),
});
export type TraceConfig = z.infer<typeof traceConfig>;

/** A free-form JSON object (JSON Schema documents, provider options, preset configs). */
export const jsonObject = z.record(z.string(), z.unknown());

/** The offset/limit pair most list operations share; the SDK always sends both. */
export const pageQuery = {
  offset: queryInt(0, 1_000_000_000).optional(),
  limit: queryInt(1, 1000).optional(),
};

export const deletedResponse = z.object({ deleted: z.literal(true) });
