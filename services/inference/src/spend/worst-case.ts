import type { ResolvedEndpoint } from "@switchyard/contracts";
import { toPico } from "@switchyard/runtime";

/** What an image, audio clip or file in the prompt is reserved at: its payload says little about its tokens. */
export const mediaTokenAllowance = 2000;

const mediaPayload = (key: string, value: unknown) =>
  typeof value === "string" && value.length > 256 && (value.startsWith("data:") || key === "data" || key === "file_data");

/**
 * An upper bound on the prompt's tokens: its JSON in UTF-8 bytes (no tokenizer makes a token of less than a
 * byte, and the JSON punctuation covers each message's framing tokens), with media at a flat allowance.
 */
export function promptTokenBound(body: Record<string, unknown>): number {
  const plain = JSON.stringify({ messages: body.messages, tools: body.tools });
  // Without a `data:` value or a `data`/`file_data` key there is no media payload to count apart, and the
  // replacer below (a call per value) is not needed.
  if (!plain.includes('"data:') && !plain.includes('"data":') && !plain.includes('"file_data":')) return Buffer.byteLength(plain, "utf8");
  let media = 0;
  const json = JSON.stringify({ messages: body.messages, tools: body.tools }, (key, value: unknown) => {
    if (!mediaPayload(key, value)) return value;
    media++;
    return "";
  });
  return Buffer.byteLength(json, "utf8") + media * mediaTokenAllowance;
}

export interface WorstCase {
  promptTokens: number;
  /** The completion tokens the request may produce: its own max, else the endpoint's, else the context left. */
  completionTokens: number;
  /** Price of one completion token at the dearest rate (reasoning may cost more). */
  completionPrice: bigint;
  /** Prompt and per-request charges, fixed once the request is sent. */
  fixed: bigint;
  amount: bigint;
}

const positive = (value: unknown) => (typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined);
const dearest = (...prices: Array<string | undefined>) => prices.reduce((max, p) => (p === undefined ? max : toPico(p) > max ? toPico(p) : max), 0n);

/** The most one attempt on this endpoint can cost: what its hold reserves. */
export function worstCase(endpoint: ResolvedEndpoint, body: Record<string, unknown>): WorstCase {
  const promptTokens = promptTokenBound(body);
  const asked = positive(body.max_completion_tokens) ?? positive(body.max_tokens);
  const ceiling = endpoint.max_completion_tokens ?? Math.max(1, endpoint.context_length - promptTokens);
  const completionTokens = asked === undefined ? ceiling : Math.min(asked, ceiling);
  const p = endpoint.pricing;
  const completionPrice = dearest(p.completion, p.internal_reasoning);
  const fixed = BigInt(promptTokens) * dearest(p.prompt, p.input_cache_write, p.input_cache_write_1h) + toPico(p.request);
  return { promptTokens, completionTokens, completionPrice, fixed, amount: fixed + BigInt(completionTokens) * completionPrice };
}

/** How many completion tokens `remaining` pays for once the fixed part is paid. */
export function affordableTokens(worst: WorstCase, remaining: bigint): number {
  const left = remaining - worst.fixed;
  if (left <= 0n || worst.completionPrice === 0n) return 0;
  const tokens = left / worst.completionPrice;
  return tokens > BigInt(worst.completionTokens) ? worst.completionTokens : Number(tokens);
}
