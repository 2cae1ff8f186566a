import { imageGenerationRequest, providerPreferencesWithOptions } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import { enforceFindings, filterOptions, filterPrompt, mergeFindings } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import { z } from "zod";
import { fallbackModels, refuseUnknown, withPreset } from "../body.js";
import type { MediaDeps } from "../deps.js";
import { askedUsage, imageCall, sendImages, unfitFor, worstCase } from "../images/generation.js";
import { loadReferences } from "../images/references.js";
import { streamImages } from "../images/stream.js";
import { modelList } from "../resolution.js";
import { firstAccepted, inferenceCaller, startRun } from "../run.js";

const routing = z.object({ provider: providerPreferencesWithOptions.optional() });

/**
 * What `/images` takes beside the contract's fields: fallback models, and `response_format` where it asks
 * for what the gateway answers (the openai SDK's `b64_json`).
 */
const extras = z.object({
  models: fallbackModels.optional(),
  response_format: z.literal("b64_json", { error: "only b64_json is supported: images come back as base64 in b64_json" }).optional(),
});

/** Every field `/images` handles; another is refused with 400, as it would have no effect. */
const takes = [...Object.keys(imageGenerationRequest.shape), ...Object.keys(extras.shape)];

/** `POST /images`: check, fetch references, hold the worst case, try the endpoints in order, answer, charge. */
export const imagesRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    refuseUnknown(req.body, takes);
    const { body, preset } = await withPreset(deps, req, inferenceCaller(res), req.body, { takes, route: "/images" });
    const request = parseInput(imageGenerationRequest, body, "body");
    const { models } = parseInput(extras, body, "body");
    const { provider: preferences } = parseInput(routing, { provider: request.provider }, "body");
    const run = await startRun(deps, req, res, {
      models: modelList(request.model, models),
      preset,
      modality: "image",
      preferences,
      sessionId: request.session_id,
      streamed: request.stream === true,
      providers: deps.imagers,
      unfit: unfitFor(request),
      trace: request.trace,
      user: request.user,
    });
    // Before references are fetched or spend held: a blocked prompt costs nothing, a redacted one is what the
    // provider gets. Provider options are sent beside it, so their text is read as well.
    const prompt = filterPrompt(run.filters, request.prompt);
    const scanned = filterOptions(run.filters, request.provider?.options ?? {});
    run.findings = mergeFindings([prompt.findings, scanned.findings]);
    enforceFindings(run.findings, "images", deps.logger);
    request.prompt = prompt.value;
    const options = scanned.value;
    const references = await loadReferences((request.input_references ?? []).map((r) => r.image_url.url), deps.references);
    // Options are per provider slug; each attempt gets its own provider's.
    const callFor = (slug: string) => imageCall(request, references, (options[slug] ?? {}) as Record<string, unknown>, run.caller.workspaceId);
    const call = imageCall(request, references, {}, run.caller.workspaceId);
    const costs = { worstCase: worstCase(call), asked: askedUsage(call) };
    if (request.stream) return streamImages(run, call, callFor, costs, res);
    const { result, ...served } = await firstAccepted(run, costs, (provider, target, c, { signal }) => provider.generate(callFor(c.endpoint.provider), target, signal));
    await sendImages(run, call, served, result, res);
  };
