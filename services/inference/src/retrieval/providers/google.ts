import { z } from "zod";
import { postJsonAnswer } from "@switchyard/upstream";
import type { EmbeddingProvider } from "../types.js";
import { checkVectors, floatVector, issueOf, malformed } from "./answers.js";
import { endpointUrl, providerInputType, textOf } from "./wire.js";

/** Embeddings in request order; Gemini's answer carries no token count. */
const answer = z.looseObject({ embeddings: z.array(z.looseObject({ values: floatVector })) });

/** Gemini's task types by purpose; its other task types (CODE_RETRIEVAL_QUERY, QUESTION_ANSWERING…) pass as named. */
const taskTypes = {
  query: "RETRIEVAL_QUERY",
  document: "RETRIEVAL_DOCUMENT",
  classification: "CLASSIFICATION",
  clustering: "CLUSTERING",
  similarity: "SEMANTIC_SIMILARITY",
};

/**
 * Gemini's `POST {base}/models/{model}:batchEmbedContents`, one EmbedContentRequest per input. The call's
 * provider options go into each of those requests (`title`, `taskType`…), as Gemini's body has no other
 * place for them; the call's own fields win. Gemini's text embedding models answer floats only.
 */
export const googleEmbeddings: EmbeddingProvider = {
  tokens: false,
  images: false,
  dimensions: true,
  inputType: true,
  async embed(call, target, signal) {
    const model = `models/${target.upstreamModel.replace(/^models\//, "")}`;
    const taskType = call.inputType === undefined ? undefined : providerInputType(call.inputType, taskTypes);
    const requests = call.inputs.map((input) => ({
      ...call.options,
      model,
      content: { parts: [{ text: textOf(input, target.provider) }] },
      ...(taskType ? { taskType } : {}),
      ...(call.dimensions !== undefined ? { outputDimensionality: call.dimensions } : {}),
    }));
    const url = endpointUrl(target, `/${model}:batchEmbedContents`);
    const headers: Record<string, string> = target.apiKey ? { "x-goog-api-key": target.apiKey } : {};
    const parsed = answer.safeParse(await postJsonAnswer(target.provider, url, headers, { requests }, signal));
    if (!parsed.success) throw malformed(target, "embeddings", issueOf(parsed.error));
    const vectors = parsed.data.embeddings.map((embedding) => embedding.values);
    return { vectors: checkVectors(target, vectors, call.inputs.length, call.dimensions), promptTokens: undefined, upstreamId: null, verbatim: false };
  },
};
