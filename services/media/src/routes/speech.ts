import { speechRequest } from "@switchyard/contracts";
import { parseInput } from "@switchyard/runtime";
import { enforceFindings, filterOptions, filterPrompt, firstEventThenIdle, mergeFindings } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import { fallbackModels, refuseUnknown, withPreset } from "../body.js";
import type { MediaDeps } from "../deps.js";
import { modelList } from "../resolution.js";
import { firstAccepted, inferenceCaller, startRun } from "../run.js";
import { sendSpeech } from "../speech/stream.js";
import { askedUsage, speechText, wantsEvents, worstCase } from "../speech/usage.js";

/** The speech contract with fallback models, tried like chat's until one sends its first audio. */
const speechBody = speechRequest.extend({ models: fallbackModels.optional() });

/** Every field `/audio/speech` handles; another is refused with 400, as it would have no effect. */
const takes = Object.keys(speechBody.shape);

/**
 * `POST /audio/speech`: check, hold the worst case, try the endpoints in order until one sends its first
 * audio, stream that audio to the client, charge.
 */
export const speechRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    refuseUnknown(req.body, takes);
    const { body, preset } = await withPreset(deps, req, inferenceCaller(res), req.body, { takes, route: "/audio/speech" });
    const request = parseInput(speechBody, body, "body");
    const run = await startRun(deps, req, res, {
      models: modelList(request.model, request.models),
      preset,
      modality: "speech",
      preferences: request.provider,
      sessionId: request.session_id,
      streamed: true,
      providers: deps.speakers,
      // Settings a model ignores (gpt-4o-mini-tts has no speed, tts-1 no instructions) go only where the catalog lists them.
      unfit: (_provider, c) => (["instructions", "speed"] as const).filter((name) => request[name] !== undefined && !c.endpoint.supported_parameters.includes(name)).map((name) => `takes no ${name}`)[0],
      trace: request.trace,
      user: request.user,
    });
    // The text, the instructions and the provider options are the caller's: the guardrails' content filters apply to them before anything is held.
    const input = filterPrompt(run.filters, request.input);
    const instructions = request.instructions === undefined ? undefined : filterPrompt(run.filters, request.instructions);
    const { value: options, findings: optionFindings } = filterOptions(run.filters, request.provider?.options ?? {});
    run.findings = mergeFindings([input.findings, instructions?.findings ?? [], optionFindings]);
    enforceFindings(run.findings, "speech", deps.logger);
    const text = speechText(input.value, instructions?.value);
    const sent = { format: request.response_format ?? "mp3", speed: request.speed ?? 1 };
    const costs = { worstCase: worstCase(text), asked: askedUsage(text, sent.speed) };
    const { result: parts, ...served } = await firstAccepted(run, costs, async (provider, target, c, attempt) => {
      const audio = await provider.speak(
        {
          input: text.input,
          voice: request.voice,
          format: sent.format,
          speed: request.speed,
          instructions: text.instructions,
          events: wantsEvents(c),
          options: options[c.endpoint.provider] ?? {},
        },
        target,
        attempt.signal,
      );
      // Accepted only once audio flows: a provider that answers and then sends nothing is a timeout, and the next endpoint is tried.
      return firstEventThenIdle(audio, attempt, c.endpoint.provider, deps.timeouts.idleMs);
    });
    await sendSpeech(run, served, parts, text, sent, res);
  };
