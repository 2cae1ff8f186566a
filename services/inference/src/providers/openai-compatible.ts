import { extended } from "@switchyard/runtime";
import { z } from "zod";
import { postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { PartBatch, StreamPart } from "../generation/parts.js";
import { chatChoice, chatDeltaParts } from "./chat-parts.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";

/** Usage in OpenAI's shape, as its chat and legacy completions report it. */
export const openAiUsage = z
  .looseObject({
    prompt_tokens: z.number().int().min(0).default(0),
    completion_tokens: z.number().int().min(0).default(0),
    prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().nullish(), cache_write_tokens: z.number().int().nullish() }).nullish(),
    completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().nullish() }).nullish(),
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

/** OpenAI's usage as the gateway counts it; cached prompt tokens are part of the prompt's. */
export const toUsage = (u: z.infer<typeof openAiUsage>): UpstreamUsage | undefined =>
  u
    ? {
        promptTokens: u.prompt_tokens,
        completionTokens: u.completion_tokens,
        cachedTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
        cacheWriteTokens: u.prompt_tokens_details?.cache_write_tokens ?? 0,
        reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
      }
    : undefined;

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
    extended(body, { cache_control: undefined, prompt_cache_options: undefined, model: target.upstreamModel, ...answerMode(stream) }),
  ];
}

/** OpenAI's Chat Completions wire format, spoken by OpenAI and most other servers. */
export const openAiCompatible: ChatProvider = {
  async complete(body, target, signal) {
    const parsed = completion.safeParse(await postJsonAnswer(...call(body, target, false), signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a chat completion`, 502, true);
    const c = parsed.data;
    return {
      id: c.id ?? null,
      choices: c.choices.map(chatChoice),
      usage: toUsage(c.usage),
      systemFingerprint: c.system_fingerprint ?? null,
      serviceTier: c.service_tier ?? null,
    };
  },
  async stream(body, target, signal) {
    const res = await postJson(...call(body, target, true), signal);
    const stream = res.body;
    return (async function* (): AsyncGenerator<PartBatch> {
      const started = new Set<string>();
      for await (const data of sseData(stream)) {
        const parsed = completion.safeParse(JSON.parse(data));
        if (!parsed.success) throw new UpstreamError(`${target.provider} sent a chunk that does not parse`, 502, false);
        const c = parsed.data;
        // The provider's own in-band failure: the stream failed mid-way, whatever its last chunk said.
        if (c.error) throw new UpstreamError(`${target.provider}: ${c.error.message ?? "error mid-stream"}`, typeof c.error.code === "number" ? c.error.code : 502, false);
        const parts: StreamPart[] = [];
        if (c.system_fingerprint || c.service_tier) parts.push({ type: "metadata", systemFingerprint: c.system_fingerprint ?? null, serviceTier: c.service_tier ?? null });
        for (const [i, choice] of c.choices.entries()) parts.push(...chatDeltaParts(choice, i, started));
        const used = toUsage(c.usage);
        if (used) parts.push({ type: "usage", usage: used });
        if (parts.length) yield parts;
      }
    })();
  },
};
