import { z } from "zod";
import { postJsonAnswer } from "@switchyard/upstream";
import type { EmbeddingProvider, RerankProvider } from "../types.js";
import { bestFirst, checkVectors, count, inInputOrder, issueOf, malformed, rankedDocument, rerankBody, vector } from "./answers.js";
import { postEmbeddings } from "./reply.js";
import { bearer, endpointUrl, providerInputType, textOf } from "./wire.js";

const usage = z.looseObject({ total_tokens: count }).nullish();

const embedAnswer = z.looseObject({ data: z.array(z.looseObject({ index: z.number().nullish(), embedding: vector })), usage });

const rerankAnswer = z.looseObject({ data: z.array(rankedDocument), usage });

/**
 * Voyage's input types: `query` and `document` prepend a retrieval prompt; for other purposes Voyage
 * advises none (`null`, the plain embedding). Other names pass as given, for Voyage to take or refuse.
 */
const inputTypes = { query: "query", document: "document", classification: null, clustering: null, similarity: null };

/**
 * Voyage's `POST {base}/embeddings`. Vectors come as float32: as numbers, or as base64 of a little-endian
 * float32 array (OpenAI's encoding) when the caller asked for base64. Usage is `total_tokens`.
 */
export const voyageEmbeddings: EmbeddingProvider = {
  tokens: false,
  images: false,
  dimensions: true,
  inputType: true,
  async embed(call, target, signal) {
    const body = {
      ...call.options,
      model: target.upstreamModel,
      input: call.inputs.map((input) => textOf(input, target.provider)),
      ...(call.inputType !== undefined ? { input_type: providerInputType(call.inputType, inputTypes) } : {}),
      ...(call.dimensions !== undefined ? { output_dimension: call.dimensions } : {}),
      output_dtype: "float",
      encoding_format: call.encoding === "base64" ? "base64" : null,
    };
    const reply = await postEmbeddings(target, body, signal);
    const parsed = embedAnswer.safeParse(reply.json);
    if (!parsed.success) throw malformed(target, "embeddings", issueOf(parsed.error));
    const { data, usage } = parsed.data;
    return {
      vectors: checkVectors(target, inInputOrder(target, data, call.inputs.length), call.inputs.length, call.dimensions),
      promptTokens: usage?.total_tokens ?? undefined,
      upstreamId: null,
      verbatim: reply.plain,
    };
  },
};

/** Voyage's `POST {base}/rerank`; it counts tokens (`usage.total_tokens`) and sends no id. */
export const voyageRerank: RerankProvider = {
  async rerank(call, target, signal) {
    const body = rerankBody(call, target, "top_k", { return_documents: false });
    const parsed = rerankAnswer.safeParse(await postJsonAnswer(target.provider, endpointUrl(target, "/rerank"), bearer(target), body, signal));
    if (!parsed.success) throw malformed(target, "rerank results", issueOf(parsed.error));
    const { data, usage } = parsed.data;
    return {
      results: bestFirst(target, data, call.documents.length, call.topN),
      totalTokens: usage?.total_tokens ?? undefined,
      searchUnits: undefined,
      upstreamId: null,
    };
  },
};
