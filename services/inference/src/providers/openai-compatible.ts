import { extended } from "@switchyard/runtime";
import { z } from "zod";
import { parsedText, posted, postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { PartBatch, StreamPart } from "../generation/parts.js";
import { isObject, text } from "../json.js";
import { outputLimit } from "../request-body.js";
import { chatChoice, chatDeltaParts, withoutBoundReasoning, withReasoningRelayed } from "./chat-parts.js";
import { answeredError, statusOfCode, tokenCount } from "./answers.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";

/** Usage in OpenAI's shape, as its chat and legacy completions report it. */
export const openAiUsage = z
  .looseObject({
    prompt_tokens: tokenCount.default(0),
    completion_tokens: tokenCount.default(0),
    prompt_tokens_details: z.looseObject({ cached_tokens: tokenCount.nullish(), cache_write_tokens: tokenCount.nullish(), audio_tokens: tokenCount.nullish() }).nullish(),
    completion_tokens_details: z.looseObject({ reasoning_tokens: tokenCount.nullish(), audio_tokens: tokenCount.nullish() }).nullish(),
  })
  .nullish();

const completion = z.looseObject({
  id: z.string().nullish(),
  choices: z.array(z.looseObject({})).default([]),
  usage: openAiUsage,
  system_fingerprint: z.string().nullish(),
  service_tier: z.string().nullish(),
  /** OpenRouter-style servers end a failing stream with a chunk carrying the error. */
  error: z.looseObject({ code: z.unknown(), message: z.string().nullish() }).nullish(),
});

/**
 * OpenAI's usage as the gateway counts it; cached and audio prompt tokens are part of the prompt's, reasoning
 * and audio completion tokens part of the completion's.
 */
export const toUsage = (u: z.infer<typeof openAiUsage>): UpstreamUsage | undefined => {
  if (!u) return undefined;
  const audio = u.prompt_tokens_details?.audio_tokens ?? 0;
  const audioOutput = u.completion_tokens_details?.audio_tokens ?? 0;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: u.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
    ...(audio ? { audioTokens: audio } : {}),
    ...(audioOutput ? { audioOutputTokens: audioOutput } : {}),
  };
};

/** How OpenAI's wire formats ask for an answer whole, or for a stream that ends with its usage. */
export const answerMode = (stream: boolean) => (stream ? { stream: true, stream_options: { include_usage: true } } : { stream: false });

/**
 * The call for `body`: provider, URL, headers and JSON body, one copy of it with the endpoint's model and the
 * answer mode. Prompt-cache markers at the top level are Anthropic's idea; this wire format caches on its own,
 * so they are set undefined in that copy, which JSON leaves out.
 */
function call(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): JsonPost {
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}/chat/completions`,
    target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
    posted(target, extended(body, { cache_control: undefined, prompt_cache_options: undefined, model: target.upstreamModel, ...answerMode(stream) })),
  ];
}

/** The `reasoning_effort` values OpenAI's Chat Completions take (each model takes some of them). */
const openAiEfforts = ["none", "minimal", "low", "medium", "high", "xhigh"];

/**
 * The share of the output limit each effort gives to reasoning, as OpenRouter documents it: a reasoning
 * budget in tokens asks for the effort of the nearest share. `xhigh` is not among them, as fewer models take it.
 */
const effortShares: ReadonlyArray<readonly [string, number]> = [
  ["minimal", 0.1],
  ["low", 0.2],
  ["medium", 0.5],
  ["high", 0.8],
];

const refuse = (message: string): never => {
  throw new UpstreamError(`openai: ${message}`, 400, false);
};

/** The effort OpenAI gets for the reasoning options; none when they ask for none in particular. */
function openAiEffort(body: Record<string, unknown>, outputLimit: number | null): string | undefined {
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  if (reasoning.enabled === false || reasoning.max_tokens === 0) return "none";
  const effort = text(body.reasoning_effort) || text(reasoning.effort);
  if (effort) return openAiEfforts.includes(effort) ? effort : refuse(`reasoning effort "${effort}" is not one OpenAI takes; use one of ${openAiEfforts.join(", ")}`);
  const budget = reasoning.max_tokens;
  if (typeof budget !== "number") return undefined;
  if (!outputLimit) return refuse("reasoning.max_tokens is weighed against the output limit, and this endpoint has none: set max_completion_tokens or use reasoning.effort");
  const share = budget / outputLimit;
  return effortShares.reduce((best, next) => (Math.abs(next[1] - share) < Math.abs(best[1] - share) ? next : best))[0];
}

/**
 * The body OpenAI's own Chat Completions take: the output limit the hold covers (`outputLimit`) as
 * `max_completion_tokens` (reasoning models refuse `max_tokens`, and every current chat model takes the
 * former), and the reasoning options as `reasoning_effort` alone (OpenAI refuses the `reasoning` object).
 */
export function openAiBody(body: Record<string, unknown>, endpointMaxTokens: number | null): Record<string, unknown> {
  const out = { ...body };
  delete out.max_tokens;
  delete out.reasoning;
  delete out.reasoning_effort;
  const limit = outputLimit(body, endpointMaxTokens);
  if (limit !== undefined) out.max_completion_tokens = limit;
  const effort = openAiEffort(body, limit ?? endpointMaxTokens);
  if (effort) out.reasoning_effort = effort;
  return out;
}

/**
 * A wire format of Chat Completions, given how it makes its body of the gateway's. Reasoning bound to another
 * provider (`withoutBoundReasoning`) is left out first: this format has no provider of its own to give it to,
 * unless the endpoint is a router that relays it to the providers behind it (`withReasoningRelayed`).
 */
function chatCompletions(shapeOf: (body: Record<string, unknown>, target: UpstreamTarget) => Record<string, unknown>): ChatProvider {
  const shape = (body: Record<string, unknown>, target: UpstreamTarget) => shapeOf(target.relaysReasoning ? withReasoningRelayed(body) : withoutBoundReasoning(body), target);
  return {
    async complete(body, target, signal) {
      const parsed = completion.safeParse(await postJsonAnswer(...call(shape(body, target), target, false), signal));
      if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a chat completion`, 502, true);
      const c = parsed.data;
      // A 200 is no answer by itself: an error in its body is the provider's failure, and a body without a choice
      // ({"message": "ok"}, a proxy's page as JSON) is not a completion to charge for.
      if (c.error) throw answeredError(target.provider, statusOfCode(c.error.code), c.error.message ?? "error");
      if (c.choices.length === 0) throw new UpstreamError(`${target.provider} sent a response without a choice`, 502, true);
      return {
        id: c.id ?? null,
        choices: c.choices.map(chatChoice),
        usage: toUsage(c.usage),
        systemFingerprint: c.system_fingerprint ?? null,
        serviceTier: c.service_tier ?? null,
      };
    },
    async stream(body, target, signal) {
      const res = await postJson(...call(shape(body, target), target, true), signal);
      const stream = res.body;
      return (async function* (): AsyncGenerator<PartBatch> {
        const started = new Set<string>();
        let ended = false;
        let named = false;
        for await (const data of sseData(stream)) {
          const parsed = completion.safeParse(parsedText(data));
          if (!parsed.success) throw new UpstreamError(`${target.provider} sent a chunk that does not parse`, 502, false);
          const c = parsed.data;
          // The provider's own in-band failure: the stream failed mid-way, whatever its last chunk said. (Before
          // the first event, the attempt makes it a fallback as its status allows.)
          if (c.error) throw new UpstreamError(`${target.provider}: ${c.error.message ?? "error mid-stream"}`, statusOfCode(c.error.code), false);
          const parts: StreamPart[] = [];
          // The answer's id comes once, from the first chunk that carries one.
          const id: string | undefined = !named && c.id ? c.id : undefined;
          named ||= id !== undefined;
          if (id || c.system_fingerprint || c.service_tier) parts.push({ type: "metadata", ...(id ? { id } : {}), systemFingerprint: c.system_fingerprint ?? null, serviceTier: c.service_tier ?? null });
          for (const [i, choice] of c.choices.entries()) parts.push(...chatDeltaParts(choice, i, started));
          const used = toUsage(c.usage);
          if (used) parts.push({ type: "usage", usage: used });
          ended ||= used !== undefined || parts.some((p) => p.type === "finish");
          if (parts.length) yield parts;
        }
        // The body ended as a stream does (the reader cannot tell `[DONE]` from the connection's end), and yet the
        // answer did not: neither a finish reason nor usage came. That is a stream cut short, as the Anthropic
        // and Responses wire formats say of theirs, not an answer.
        if (!ended) throw new UpstreamError(`${target.provider}'s stream ended before a finish reason or usage`, 502, false);
      })();
    },
  };
}

/**
 * OpenAI's Chat Completions wire format as other servers speak it (OpenRouter-style, vLLM…): the body as the
 * gateway has it, whose output limits the generation has already set to what the hold covers (`withOutputLimit`).
 */
export const openAiCompatible: ChatProvider = chatCompletions((body) => body);

/** OpenAI's own Chat Completions: the body in the parameters OpenAI takes (`openAiBody`). */
export const openAi: ChatProvider = chatCompletions((body, target) => openAiBody(body, target.maxCompletionTokens));
