import { imageGenerationRequest, providerPreferences } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import { enforceFindings, filterPrompt } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import { z } from "zod";
import type { MediaDeps } from "../deps.js";
import { imageCall, sendImages, unfitFor, worstCase } from "../images/generation.js";
import { loadReferences } from "../images/references.js";
import { streamImages } from "../images/stream.js";
import { firstAccepted, startRun } from "../run.js";

const routing = z.object({ provider: providerPreferences.optional() });

/** `POST /images`: check, fetch references, hold the worst case, try the endpoints in order, answer, charge. */
export const imagesRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    const request = parseInput(imageGenerationRequest, req.body, "body");
    const { provider: preferences } = parseInput(routing, { provider: request.provider }, "body");
    const run = await startRun(deps, req, res, {
      model: request.model ?? "",
      modality: "image",
      preferences,
      sessionId: request.session_id,
      providers: deps.imagers,
      unfit: unfitFor(request),
      trace: request.trace,
      user: request.user,
    });
    // Before references are fetched or spend held: a blocked prompt costs nothing, a redacted one is what the provider gets.
    const prompt = filterPrompt(run.filters, request.prompt);
    enforceFindings(prompt.findings, "images", deps.logger);
    run.findings = prompt.findings;
    request.prompt = prompt.value;
    const references = await loadReferences((request.input_references ?? []).map((r) => r.image_url.url), deps.references);
    const options = request.provider?.options ?? {};
    // Options are per provider slug; each attempt gets its own provider's.
    const callFor = (slug: string) => imageCall(request, references, (options[slug] ?? {}) as Record<string, unknown>, run.caller.workspaceId);
    const call = imageCall(request, references, {}, run.caller.workspaceId);
    if (request.stream) return streamImages(run, call, callFor, worstCase(call), res);
    const { result, ...served } = await firstAccepted(run, worstCase(call), (provider, target, c, { signal }) => provider.generate(callFor(c.endpoint.provider), target, signal));
    await sendImages(run, call, served, result, res);
  };
