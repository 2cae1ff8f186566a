import type { EmbeddingsRequest } from "@switchyard/contracts";
import { mediaTokenAllowance } from "../spend/worst-case.js";
import { estimateTokens } from "../cost.js";
import type { EmbeddingInput, EmbeddingPart } from "./types.js";

/**
 * No tokenizer's tokens average more UTF-8 bytes than this over a text: a text longer than this number of
 * bytes per allowed token is over the endpoint's limit whatever the tokenizer, and is refused before a
 * provider is called. Shorter texts go to the provider, which counts exactly.
 */
const bytesPerTokenCeiling = 6;

/** One input with what the gateway knows of its size before a provider counts it. */
export interface SizedInput {
  input: EmbeddingInput;
  /** Exact for token ids; for text and images an upper bound (a token is at least a byte; an image at the flat allowance). */
  tokenBound: number;
  /** Exact for token ids; for text and images the estimate charged when a provider reports no usage. */
  tokenEstimate: number;
  /** Text of the input a content filter must see (token ids have none it can read). */
  hasText: boolean;
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

function sizedText(text: string): SizedInput {
  return { input: { kind: "text", text }, tokenBound: bytes(text), tokenEstimate: estimateTokens(text), hasText: true };
}

function sizedParts(content: Array<{ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } }>): SizedInput {
  const parts: EmbeddingPart[] = content.map((p) => (p.type === "text" ? { type: "text", text: p.text } : { type: "image", url: p.image_url.url }));
  let tokenBound = 0;
  let tokenEstimate = 0;
  for (const part of parts) {
    tokenBound += part.type === "text" ? bytes(part.text) : mediaTokenAllowance;
    tokenEstimate += part.type === "text" ? estimateTokens(part.text) : mediaTokenAllowance;
  }
  return { input: { kind: "parts", parts }, tokenBound, tokenEstimate, hasText: parts.some((p) => p.type === "text") };
}

/** The request's `input`, whatever its form, as a list of inputs in order. */
export function embeddingInputs(input: EmbeddingsRequest["input"]): SizedInput[] {
  if (typeof input === "string") return [sizedText(input)];
  const first = input[0];
  if (typeof first === "number") {
    const tokens = input as number[];
    return [{ input: { kind: "tokens", tokens }, tokenBound: tokens.length, tokenEstimate: tokens.length, hasText: false }];
  }
  return (input as Array<string | number[] | { content: Parameters<typeof sizedParts>[0] }>).map((item) => {
    if (typeof item === "string") return sizedText(item);
    if (Array.isArray(item)) return { input: { kind: "tokens", tokens: item }, tokenBound: item.length, tokenEstimate: item.length, hasText: false };
    return sizedParts(item.content);
  });
}

/** The UTF-8 bytes of an input's text, its text parts' together. */
const textBytes = (input: Exclude<EmbeddingInput, { kind: "tokens" }>): number =>
  input.kind === "text" ? bytes(input.text) : input.parts.reduce((sum, p) => sum + (p.type === "text" ? bytes(p.text) : 0), 0);

/**
 * Why an endpoint whose inputs hold at most `maxTokens` tokens each cannot take these inputs, if it cannot:
 * token ids are counted exactly; text (a multimodal input's text parts together) over the byte ceiling
 * above cannot fit.
 */
export function overLimit(inputs: readonly SizedInput[], maxTokens: number): string | undefined {
  for (const [index, sized] of inputs.entries()) {
    const { input } = sized;
    if (input.kind === "tokens" && input.tokens.length > maxTokens) return `input ${index} has ${input.tokens.length} tokens; at most ${maxTokens} per input`;
    if (input.kind !== "tokens" && textBytes(input) > maxTokens * bytesPerTokenCeiling) return `input ${index} is longer than ${maxTokens} tokens allow`;
  }
  return undefined;
}

/** The most tokens the inputs can be billed for on an endpoint of `maxTokens` per input (more is refused or truncated). */
export const tokenBound = (inputs: readonly SizedInput[], maxTokens: number): number => inputs.reduce((sum, i) => sum + Math.min(i.tokenBound, maxTokens), 0);

/** The tokens charged when a provider reports none. */
export const tokenEstimate = (inputs: readonly SizedInput[]): number => inputs.reduce((sum, i) => sum + i.tokenEstimate, 0);
