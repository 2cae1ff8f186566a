import { extended } from "@switchyard/runtime";
import { z } from "zod";
import type { UpstreamTarget } from "@switchyard/upstream";
import type { EmbeddingAnswer, EmbeddingCall, EmbeddingProvider } from "../types.js";
import { checkVectors, count, inInputOrder, issueOf, malformed, vector } from "./answers.js";
import { postEmbeddings } from "./reply.js";
import { textOf } from "./wire.js";

const answer = z.looseObject({
  /** OpenAI sends none; OpenRouter and some other servers do. */
  id: z.string().nullish(),
  data: z.array(z.looseObject({ index: z.number().nullish(), embedding: vector })),
  usage: z.looseObject({ prompt_tokens: count }).nullish(),
});

/** What a request sends as `input`: all strings, or all token-id arrays (OpenAI takes one kind per request). */
type Batch = string[] | number[][];

/**
 * One `POST {base}/embeddings`. The call's own fields win over its provider options. The answer may carry
 * floats or base64 whichever was asked (servers that ignore `encoding_format` send floats): both are vectors.
 */
async function request(call: EmbeddingCall, input: Batch, target: UpstreamTarget, signal: AbortSignal): Promise<EmbeddingAnswer> {
  const body = extended(call.options, {
    model: target.upstreamModel,
    input,
    encoding_format: call.encoding,
    ...(call.dimensions !== undefined ? { dimensions: call.dimensions } : {}),
    ...(call.inputType !== undefined ? { input_type: call.inputType } : {}),
    ...(call.user ? { user: call.user } : {}),
  });
  const reply = await postEmbeddings(target, body, signal);
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

/** OpenAI's embeddings wire, `POST {base}/embeddings`: OpenAI's own API takes token ids and no `input_type`. */
export const openAiEmbeddings: EmbeddingProvider = {
  tokens: true,
  images: false,
  dimensions: true,
  inputType: false,
  async embed(call, target, signal) {
    // The contract keeps a request's inputs of one kind, as OpenAI's `input` is: all token ids, or all text.
    if (call.inputs.every((input) => input.kind === "tokens")) return request(call, call.inputs.map((input) => input.tokens), target, signal);
    return request(call, call.inputs.map((input) => textOf(input, target.provider)), target, signal);
  },
};

/**
 * The same wire as OpenAI-compatible servers speak it: text only (Mistral's and Jina's `input` takes no token
 * ids), and `input_type` as NVIDIA's and OpenRouter's servers read it, sent where the catalog lists it.
 */
export const openAiCompatibleEmbeddings: EmbeddingProvider = {
  tokens: false,
  images: false,
  dimensions: true,
  inputType: true,
  embed: (call, target, signal) => request(call, call.inputs.map((input) => textOf(input, target.provider)), target, signal),
};
