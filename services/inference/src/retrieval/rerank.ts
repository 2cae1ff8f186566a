import { rerankRequest, type RerankRequest } from "@switchyard/contracts";
import { badRequest, parseInput, picoToUsd, sendJson, type Caller } from "@switchyard/runtime";
import { enforceFindings, filterOptions, filterTexts, mergeFindings, type Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import { estimateTokens } from "../cost.js";
import type { JsonRequest } from "../dialects/chat/route.js";
import type { InferenceDeps } from "../deps.js";
import { retrievalCost, type RetrievalUsage } from "./cost.js";
import { rerankers } from "./providers/index.js";
import { accept, settle, startRetrieval, withRoutePreset } from "./run.js";

/** Cohere bills a search unit per query with up to 100 documents, a document over 500 tokens (with the query) counting once per 500. */
const documentsPerSearchUnit = 100;
const tokensPerSearchChunk = 500;

/** The documents' text; an image document has no endpoint here. */
function documentTexts(documents: RerankRequest["documents"]): string[] {
  return documents.map((document, index) => {
    if (typeof document === "string") return document;
    if (document.image !== undefined) throw badRequest(`Invalid body: documents.${index}.image: no rerank endpoint here takes images`);
    if (document.text === undefined) throw badRequest(`Invalid body: documents.${index}.text: required`);
    return document.text;
  });
}

/**
 * The most a rerank of these texts can be billed on an endpoint whose documents hold `maxTokens` tokens
 * each (more is truncated): every document with the query at its byte count, in tokens and in search units.
 */
function usageBound(query: string, documents: readonly string[], maxTokens: number): RetrievalUsage {
  const queryBytes = Buffer.byteLength(query, "utf8");
  let tokens = 0;
  let chunks = 0;
  for (const document of documents) {
    const bound = Math.min(queryBytes + Buffer.byteLength(document, "utf8"), maxTokens);
    tokens += bound;
    chunks += Math.ceil(bound / tokensPerSearchChunk);
  }
  return { tokens, searchUnits: Math.ceil(chunks / documentsPerSearchUnit) };
}

/** What is charged when a provider says nothing of its usage. */
const usageEstimate = (query: string, documents: readonly string[]): RetrievalUsage => ({
  tokens: documents.reduce((sum, d) => sum + estimateTokens(query) + estimateTokens(d), 0),
  searchUnits: Math.ceil(documents.length / documentsPerSearchUnit),
});

const route = { path: "/rerank", fields: Object.keys(rerankRequest.shape) };

/** `POST /rerank`: hold the worst case of the query against every document, rank them, answer best first. */
export const rerankRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const { body, presetId } = await withRoutePreset(deps, req.headers, caller, req.body, route);
    const request = parseInput(rerankRequest, body, "body");
    const texts = documentTexts(request.documents);
    const run = await startRetrieval(deps, req.headers, res, caller, {
      modality: "rerank",
      body: request,
      presetId,
      requestedParameters: [],
      cannotCarry: ({ endpoint }: Candidate) => {
        if (!rerankers[endpoint.adapter]) return `no rerank in the ${endpoint.adapter} wire format`;
        if (endpoint.max_inputs !== null && texts.length > endpoint.max_inputs) return `at most ${endpoint.max_inputs} documents per request, not ${texts.length}`;
        return undefined;
      },
    });
    // The guardrails' content filters read the query, every document and the provider options before anything is held.
    const scanned = filterTexts(run.filters, [request.query, ...texts]);
    const options = filterOptions(run.filters, request.provider?.options ?? {});
    run.findings = mergeFindings([scanned.findings, options.findings]);
    enforceFindings(run.findings, "rerank", deps.logger);
    const [query, ...documents] = scanned.value as [string, ...string[]];
    const topN = request.top_n === undefined ? undefined : Math.min(request.top_n, documents.length);
    const estimate = usageEstimate(query, documents);
    const served = await accept(
      run,
      rerankers,
      (c) => retrievalCost(c.endpoint.pricing, usageBound(query, documents, c.endpoint.context_length)),
      (provider, target, c, signal) => provider.rerank({ query, documents, topN, options: options.value[c.endpoint.provider] ?? {} }, target, signal),
      (c) => ({ status: "cancelled", promptTokens: estimate.tokens, estimated: true, cost: retrievalCost(c.endpoint.pricing, estimate), upstreamId: null }),
    );
    const { candidate, result } = served;
    const reported = result.totalTokens !== undefined || result.searchUnits !== undefined;
    const usage = reported ? { tokens: result.totalTokens ?? 0, searchUnits: result.searchUnits ?? 0 } : estimate;
    const cost = retrievalCost(candidate.endpoint.pricing, usage);
    const { billed, isByok } = settle(run, served, { status: "completed", promptTokens: usage.tokens, estimated: !reported, cost, upstreamId: result.upstreamId });
    const withDocuments = request.return_documents !== false;
    sendJson(res, 200, {
      id: run.generationId,
      model: candidate.model,
      provider: candidate.endpoint.provider,
      results: result.results.slice(0, topN).map(({ index, score }) => ({
        index,
        relevance_score: score,
        ...(withDocuments ? { document: { text: texts[index]! } } : {}),
      })),
      usage: {
        cost: picoToUsd(billed),
        ...(result.totalTokens !== undefined ? { total_tokens: result.totalTokens } : {}),
        ...(result.searchUnits !== undefined ? { search_units: result.searchUnits } : {}),
        is_byok: isByok,
      },
    });
  };
