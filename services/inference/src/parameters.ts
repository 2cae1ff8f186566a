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

type Body = Record<string, unknown>;

/** Whether `reasoning_effort` only repeats `reasoning.effort`, as the upstream body adds it: one setting, named once. */
const repeatsEffort = (body: Body): boolean => {
  const reasoning = body.reasoning as { effort?: unknown } | null | undefined;
  return typeof reasoning === "object" && reasoning !== null && reasoning.effort === body.reasoning_effort;
};

export function dropUnsupported(body: Body, supported: readonly string[]): { body: Body; dropped: string[] } {
  if (supported.length === 0) return { body, dropped: [] };
  const dropped: string[] = [];
  const kept = { ...body };
  for (const name of declared) {
    const alias = name === "reasoning_effort" ? "reasoning" : name;
    if (kept[name] !== undefined && !supported.includes(name) && !supported.includes(alias)) {
      if (name !== "reasoning_effort" || !dropped.includes("reasoning") || !repeatsEffort(body)) dropped.push(name);
      delete kept[name];
    }
  }
  return { body: kept, dropped };
}

/**
 * Whether a body's value of `name` asks for something beyond the default: present, and for `modalities` more
 * than text, for `response_format` more than text, `logprobs` true, `parallel_tool_calls` false.
 */
export function asks(body: Body, name: string): boolean {
  const value = body[name];
  if (value === undefined || value === null) return false;
  if (name === "modalities") return Array.isArray(value) && value.some((m) => m !== "text");
  if (name === "response_format") return (value as { type?: unknown }).type !== "text";
  if (name === "logprobs") return value === true;
  if (name === "parallel_tool_calls") return value === false;
  return true;
}
