import { z } from "zod";
import { postJsonAnswer } from "@switchyard/upstream";
import type { RerankProvider } from "../types.js";
import { bestFirst, count, issueOf, malformed, rankedDocument, rerankBody } from "./answers.js";
import { bearer, endpointUrl } from "./wire.js";

const answer = z.looseObject({
  /** vLLM sends one; Jina does not. */
  id: z.string().nullish(),
  results: z.array(rankedDocument),
  usage: z.looseObject({ total_tokens: count }).nullish(),
});

/**
 * Jina's rerank wire, `POST {base}/rerank`, which Jina and vLLM serve (vLLM at `/v1/rerank` under its
 * `/v1` base) and the catalog names `openai-compatible`. Documents are not echoed back; usage, when the
 * server reports it, is `usage.total_tokens`.
 */
export const jinaRerank: RerankProvider = {
  async rerank(call, target, signal) {
    const body = rerankBody(call, target, "top_n", { return_documents: false });
    const parsed = answer.safeParse(await postJsonAnswer(target.provider, endpointUrl(target, "/rerank"), bearer(target), body, signal));
    if (!parsed.success) throw malformed(target, "rerank results", issueOf(parsed.error));
    const { results, usage, id } = parsed.data;
    return {
      results: bestFirst(target, results, call.documents.length, call.topN),
      totalTokens: usage?.total_tokens ?? undefined,
      searchUnits: undefined,
      upstreamId: id ?? null,
    };
  },
};
