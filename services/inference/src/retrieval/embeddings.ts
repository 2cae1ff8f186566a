import { embeddingsRequest, type EmbeddingsRequest } from "@switchyard/contracts";
import { badRequest, parseInput, picoToUsd, type Caller } from "@switchyard/runtime";
import { endUser, enforceFindings, filterOptions, filterTexts, mergeFindings, type Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { JsonRequest } from "../dialects/chat/route.js";
import type { InferenceDeps } from "../deps.js";
import { sendEmbeddings } from "./answer.js";
import { retrievalCost } from "./cost.js";
import { embeddingInputs, overLimit, tokenBound, tokenEstimate, type SizedInput } from "./inputs.js";
import { embedders } from "./providers/index.js";
import { keepAnswer, lookUp } from "../cache/lookup.js";
import { accept, settle, startRetrieval, withRoutePreset, type RetrievalRun } from "./run.js";
import type { EmbeddingInput, EmbeddingProvider } from "./types.js";

/** Why an endpoint cannot embed these inputs as asked, if it cannot: its catalog entry's limits and parameters, its wire. */
function cannotCarry(request: EmbeddingsRequest, inputs: readonly SizedInput[]) {
  const tokens = inputs.some((i) => i.input.kind === "tokens");
  const images = inputs.some((i) => i.input.kind === "parts" && i.input.parts.some((p) => p.type === "image"));
  return (candidate: Candidate): string | undefined => {
    const { endpoint } = candidate;
    const provider: EmbeddingProvider | undefined = embedders[endpoint.adapter];
    if (!provider) return `no embeddings in the ${endpoint.adapter} wire format`;
    if (endpoint.max_inputs !== null && inputs.length > endpoint.max_inputs) return `at most ${endpoint.max_inputs} inputs per request, not ${inputs.length}`;
    if (tokens && !provider.tokens) return "no token-id input";
    if (images && !provider.images) return "no image input";
    for (const [name, carried] of [["dimensions", provider.dimensions], ["input_type", provider.inputType]] as const) {
      if (request[name] === undefined) continue;
      if (!carried) return `no ${name} in the ${endpoint.adapter} wire format`;
      if (!endpoint.supported_parameters.includes(name)) return `no ${name}`;
    }
    return overLimit(inputs, endpoint.context_length);
  };
}

/**
 * The guardrails' content filters read the text of every input, and the provider options sent beside it,
 * before anything is held; token ids they cannot read are refused.
 */
function filtered(run: RetrievalRun, inputs: readonly SizedInput[], options: Readonly<Record<string, Record<string, unknown>>>) {
  if (run.filters.empty) return { inputs: inputs.map((i) => i.input), options };
  if (inputs.some((i) => i.input.kind === "tokens")) throw badRequest("Invalid body: input: the key's guardrails filter content, which token ids hide; send text");
  const texts: string[] = [];
  for (const { input } of inputs) {
    if (input.kind === "text") texts.push(input.text);
    else if (input.kind === "parts") for (const part of input.parts) if (part.type === "text") texts.push(part.text);
  }
  const { value, findings } = filterTexts(run.filters, texts);
  const scannedOptions = filterOptions(run.filters, options);
  run.findings = mergeFindings([findings, scannedOptions.findings]);
  enforceFindings(run.findings, "embeddings", run.deps.logger);
  let next = 0;
  const out = inputs.map(({ input }): EmbeddingInput => {
    if (input.kind === "text") return { kind: "text", text: value[next++]! };
    if (input.kind === "parts") return { kind: "parts", parts: input.parts.map((p) => (p.type === "text" ? { type: "text", text: value[next++]! } : p)) };
    return input;
  });
  return { inputs: out, options: scannedOptions.value };
}

const route = { path: "/embeddings", fields: Object.keys(embeddingsRequest.shape) };

/** `POST /embeddings`: check the inputs against each endpoint's limits, hold their worst case, embed, charge the tokens. */
export const embeddingsRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const { body, presetId } = await withRoutePreset(deps, req.headers, caller, req.body, route);
    const request = parseInput(embeddingsRequest, body, "body");
    const sized = embeddingInputs(request.input);
    const run = await startRetrieval(deps, req.headers, res, caller, {
      modality: "embeddings",
      body: request,
      presetId,
      requestedParameters: (["dimensions", "input_type"] as const).filter((name) => request[name] !== undefined),
      cannotCarry: cannotCarry(request, sized),
    });
    const { inputs, options } = filtered(run, sized, request.provider?.options ?? {});
    const format = request.encoding_format ?? "float";
    const { cacheTtlSeconds } = run;
    const cache =
      cacheTtlSeconds === undefined
        ? undefined
        : await lookUp(deps.responseCache, {
            res,
            caller,
            dialect: "embeddings",
            stream: false,
            kind: "embeddings",
            client: req.body,
            // What a provider gets, a preset's settings and the guardrails' redactions included: a new version changes it.
            sent: { inputs, dimensions: request.dimensions, input_type: request.input_type, user: request.user, options },
            candidates: run.candidates,
            ttlSeconds: cacheTtlSeconds,
            bypass: run.cacheDisabled,
          });
    const hit = cache?.hit;
    if (hit?.entry.answer.kind === "embeddings") {
      // A hit is its own generation at no cost, naming the one whose vectors it replays.
      const { candidate } = hit;
      const { vectors, verbatim } = hit.entry.answer;
      settle(run, { candidate, held: 0n }, { status: "completed", promptTokens: 0, estimated: false, cost: 0n, upstreamId: null, cacheSourceId: hit.entry.generationId });
      const usage = { prompt_tokens: 0, total_tokens: 0, cost: 0, is_byok: false };
      return sendEmbeddings(res, { id: run.generationId, model: candidate.model, provider: candidate.endpoint.provider, usage }, { vectors, promptTokens: 0, upstreamId: null, verbatim }, format);
    }
    const estimate = tokenEstimate(sized);
    const served = await accept(
      run,
      embedders,
      (c) => retrievalCost(c.endpoint.pricing, { tokens: tokenBound(sized, c.endpoint.context_length), searchUnits: 0 }),
      (provider, target, c, signal) =>
        provider.embed(
          {
            inputs,
            encoding: format,
            dimensions: request.dimensions,
            inputType: request.input_type,
            user: request.user === undefined ? undefined : endUser(caller.workspaceId, request.user),
            options: options[c.endpoint.provider] ?? {},
          },
          target,
          signal,
        ),
      (c) => ({ status: "cancelled", promptTokens: estimate, estimated: true, cost: retrievalCost(c.endpoint.pricing, { tokens: estimate, searchUnits: 0 }), upstreamId: null }),
    );
    const { candidate, result } = served;
    const promptTokens = result.promptTokens ?? estimate;
    const cost = retrievalCost(candidate.endpoint.pricing, { tokens: promptTokens, searchUnits: 0 });
    const { billed, isByok } = settle(run, served, { status: "completed", promptTokens, estimated: result.promptTokens === undefined, cost, upstreamId: result.upstreamId });
    const usage = { prompt_tokens: promptTokens, total_tokens: promptTokens, cost: picoToUsd(billed), is_byok: isByok };
    if (cache) {
      const answer = { kind: "embeddings" as const, vectors: result.vectors, verbatim: result.verbatim };
      await keepAnswer(deps.responseCache, deps.logger, caller.workspaceId, cache, { generationId: run.generationId, provider: candidate.endpoint.provider, model: candidate.model, answer });
    }
    sendEmbeddings(res, { id: run.generationId, model: candidate.model, provider: candidate.endpoint.provider, usage }, result, format);
  };
