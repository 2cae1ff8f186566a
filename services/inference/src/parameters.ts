/**
 * Sampling parameters whose support endpoints declare in the catalog. An endpoint that lists its
 * supported parameters gets only those of these; the rest are dropped and reported.
 */
const declared = [
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "top_a",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "seed",
  "stop",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "reasoning",
  "reasoning_effort",
] as const;

export function dropUnsupported(body: Record<string, unknown>, supported: readonly string[]): { body: Record<string, unknown>; dropped: string[] } {
  if (supported.length === 0) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = { ...body };
  for (const name of declared) {
    const alias = name === "reasoning_effort" ? "reasoning" : name;
    if (kept[name] !== undefined && !supported.includes(name) && !supported.includes(alias)) {
      delete kept[name];
      dropped.push(name);
    }
  }
  return { body: kept, dropped };
}
