import { z } from "zod";
import { postJsonAnswer } from "@switchyard/upstream";
import type { EmbeddingInput, EmbeddingProvider, RerankProvider } from "../types.js";
import { bestFirst, checkVectors, count, floatVector, issueOf, malformed, rankedDocument, rerankBody } from "./answers.js";
import { bearer, endpointUrl, providerInputType } from "./wire.js";

const meta = z.looseObject({ billed_units: z.looseObject({ input_tokens: count, search_units: count }).nullish() }).nullish();

const embedAnswer = z.looseObject({
  id: z.string().nullish(),
  embeddings: z.looseObject({ float: z.array(floatVector) }),
  meta,
});

const rerankAnswer = z.looseObject({ id: z.string().nullish(), results: z.array(rankedDocument), meta });

/** Cohere's input types by purpose; `image` and other names pass as given. Cohere has no similarity type. */
const inputTypes = { query: "search_query", document: "search_document", classification: "classification", clustering: "clustering" };

/** One input as Cohere's `inputs` item: text as a text part, images as `image_url` parts (Cohere reads `data:` URLs). */
function content(input: EmbeddingInput, provider: string) {
  if (input.kind === "text") return { content: [{ type: "text", text: input.text }] };
  if (input.kind === "parts") {
    return { content: input.parts.map((part) => (part.type === "text" ? { type: "text", text: part.text } : { type: "image_url", image_url: { url: part.url } })) };
  }
  throw new TypeError(`${provider} embeddings take text and images, not token ids`);
}

/**
 * Cohere's `POST {base}/v2/embed`. Plain texts go as `texts`; as soon as one input has parts, every input
 * goes as an `inputs` item, each embedded as one vector of its interleaved text and images. Cohere requires
 * `input_type` of its v3 and later models: the caller's, else the provider options', else `search_document`.
 * Floats are asked for: Cohere's `base64` embedding type has no byte layout it documents.
 */
export const cohereEmbeddings: EmbeddingProvider = {
  tokens: false,
  // Cohere embeds images, but bills their tokens apart at a price the catalog has no field for: refused until it does.
  images: false,
  dimensions: true,
  inputType: true,
  async embed(call, target, signal) {
    const texts = call.inputs.flatMap((input) => (input.kind === "text" ? [input.text] : []));
    const inputType = call.inputType === undefined ? undefined : providerInputType(call.inputType, inputTypes);
    const body = {
      ...call.options,
      model: target.upstreamModel,
      input_type: inputType ?? call.options.input_type ?? "search_document",
      embedding_types: ["float"],
      ...(texts.length === call.inputs.length ? { texts } : { inputs: call.inputs.map((input) => content(input, target.provider)) }),
      ...(call.dimensions !== undefined ? { output_dimension: call.dimensions } : {}),
    };
    const parsed = embedAnswer.safeParse(await postJsonAnswer(target.provider, endpointUrl(target, "/v2/embed"), bearer(target), body, signal));
    if (!parsed.success) throw malformed(target, "embeddings", issueOf(parsed.error));
    const { embeddings, meta, id } = parsed.data;
    return {
      vectors: checkVectors(target, embeddings.float, call.inputs.length, call.dimensions),
      promptTokens: meta?.billed_units?.input_tokens ?? undefined,
      upstreamId: id ?? null,
      // Floats only: nothing to relay as it came.
      verbatim: false,
    };
  },
};

/** Cohere's `POST {base}/v2/rerank`; it bills search units (a query with up to 100 documents), not tokens. */
export const cohereRerank: RerankProvider = {
  async rerank(call, target, signal) {
    const body = rerankBody(call, target, "top_n");
    const parsed = rerankAnswer.safeParse(await postJsonAnswer(target.provider, endpointUrl(target, "/v2/rerank"), bearer(target), body, signal));
    if (!parsed.success) throw malformed(target, "rerank results", issueOf(parsed.error));
    const { results, meta, id } = parsed.data;
    return {
      results: bestFirst(target, results, call.documents.length, call.topN),
      totalTokens: undefined,
      searchUnits: meta?.billed_units?.search_units ?? undefined,
      upstreamId: id ?? null,
    };
  },
};
