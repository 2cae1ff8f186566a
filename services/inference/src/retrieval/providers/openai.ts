import { z } from "zod";
import { postJsonReply, type UpstreamTarget } from "@switchyard/upstream";
import type { EmbeddingAnswer, EmbeddingCall, EmbeddingProvider } from "../types.js";
import { checkVectors, count, inInputOrder, issueOf, malformed, vector } from "./answers.js";
import { bearer, endpointUrl, textOf } from "./wire.js";

const answer = z.looseObject({
  /** OpenAI sends none; OpenRouter and some other servers do. */
  id: z.string().nullish(),
  data: z.array(z.looseObject({ index: z.number().nullish(), embedding: vector })),
  usage: z.looseObject({ prompt_tokens: count }).nullish(),
});

/** What one request sends as `input`: all strings, or all token-id arrays (OpenAI takes one kind per request). */
type Batch = string[] | number[][];

/**
 * One `POST {base}/embeddings`. The call's own fields win over its provider options. The answer may carry
 * floats or base64 whichever was asked (servers that ignore `encoding_format` send floats): both are vectors.
 */
async function request(call: EmbeddingCall, input: Batch, target: UpstreamTarget, signal: AbortSignal): Promise<EmbeddingAnswer> {
  const body = {
    ...call.options,
    model: target.upstreamModel,
    input,
    encoding_format: call.encoding,
    ...(call.dimensions !== undefined ? { dimensions: call.dimensions } : {}),
    ...(call.user ? { user: call.user } : {}),
  };
  const reply = await postJsonReply(target.provider, endpointUrl(target, "/embeddings"), bearer(target), body, signal);
  const parsed = answer.safeParse(reply.json);
  if (!parsed.success) throw malformed(target, "embeddings", issueOf(parsed.error));
  const { data, usage, id } = parsed.data;
  return {
    vectors: checkVectors(target, inInputOrder(target, data, input.length), input.length, call.dimensions),
    promptTokens: usage?.prompt_tokens ?? undefined,
    upstreamId: id ?? null,
    verbatim: reply.plain,
  };
}

/**
 * Inputs that mix text and token ids go as two concurrent requests, one of each kind, as OpenAI refuses
 * mixed `input` arrays; their vectors are merged back into input order and their token counts added up.
 * Either request failing cancels the other.
 */
async function mixed(call: EmbeddingCall, texts: string[], tokens: number[][], target: UpstreamTarget, signal: AbortSignal): Promise<EmbeddingAnswer> {
  const sibling = new AbortController();
  const both = AbortSignal.any([signal, sibling.signal]);
  const [textAnswer, tokenAnswer] = await Promise.all([request(call, texts, target, both), request(call, tokens, target, both)]).catch((error: unknown) => {
    sibling.abort();
    throw error;
  });
  // Each answer holds one vector per input of its kind (checked), in the order those inputs came.
  const fromTexts = textAnswer.vectors.values();
  const fromTokens = tokenAnswer.vectors.values();
  const vectors = call.inputs.map((input) => (input.kind === "tokens" ? fromTokens : fromTexts).next().value!);
  const { promptTokens: textTokens } = textAnswer;
  const { promptTokens: tokenTokens } = tokenAnswer;
  return {
    vectors,
    promptTokens: textTokens === undefined || tokenTokens === undefined ? undefined : textTokens + tokenTokens,
    upstreamId: textAnswer.upstreamId ?? tokenAnswer.upstreamId,
    verbatim: textAnswer.verbatim && tokenAnswer.verbatim,
  };
}

/** OpenAI's embeddings wire, `POST {base}/embeddings`, spoken by OpenAI and most OpenAI-compatible servers. */
export const openAiEmbeddings: EmbeddingProvider = {
  tokens: true,
  images: false,
  dimensions: true,
  async embed(call, target, signal) {
    const texts: string[] = [];
    const tokens: number[][] = [];
    for (const input of call.inputs) {
      if (input.kind === "tokens") tokens.push(input.tokens);
      else texts.push(textOf(input, target.provider));
    }
    if (tokens.length === 0) return request(call, texts, target, signal);
    if (texts.length === 0) return request(call, tokens, target, signal);
    return mixed(call, texts, tokens, target, signal);
  },
};
