import { enforceFindings, filterPrompt } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import { audioTokensPerSecond, mediaCost, transcriptTokensPerSecond, type MediaUsage } from "../cost.js";
import type { MediaDeps } from "../deps.js";
import type { UpstreamTranscription } from "../providers/types.js";
import { recordGeneration } from "../record.js";
import { billedUsd, chargeFor, firstAccepted, runRecord, startRun } from "../run.js";
import { wavSeconds, worstCaseSeconds } from "../transcription/audio.js";
import { readTranscription } from "../transcription/request.js";

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/**
 * Usage as the provider reported it. A provider that reports neither seconds nor tokens is charged for the
 * audio's length and the transcript's estimated tokens, and the usage is marked estimated.
 */
function usageOf(answer: UpstreamTranscription, audio: Buffer): { usage: MediaUsage; estimated: boolean } {
  const reported = answer.usage;
  const seconds = reported.seconds ?? answer.duration ?? wavSeconds(audio);
  const estimated = reported.seconds === undefined && reported.inputTokens === undefined && reported.outputTokens === undefined;
  return {
    usage: {
      seconds: seconds ?? worstCaseSeconds(audio),
      audioTokens: reported.inputTokens ?? 0,
      promptTokens: 0,
      completionTokens: reported.outputTokens ?? (estimated ? estimateTokens(answer.text) : 0),
    },
    estimated: estimated || seconds === undefined,
  };
}

/** `POST /audio/transcriptions`: check, hold the worst case, try the endpoints in order, answer, charge. */
export const transcriptionsRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    const input = await readTranscription(req, deps.maxAudioBytes);
    const run = await startRun(deps, req, res, {
      model: input.model,
      modality: "transcription",
      preferences: input.preferences,
      sessionId: input.sessionId,
      providers: deps.transcribers,
      unfit: (provider) =>
        input.verbose && !provider.verbose ? "no timestamps for verbose_json" : input.prompt !== undefined && !provider.prompts ? "no prompt support" : undefined,
      trace: input.trace,
      user: input.user,
    });
    // The prompt is text the caller wrote: the guardrails' content filters apply to it before anything is held.
    if (input.prompt !== undefined) {
      const prompt = filterPrompt(run.filters, input.prompt);
      enforceFindings(prompt.findings, "transcriptions", deps.logger);
      run.findings = prompt.findings;
      input.prompt = prompt.value;
    }
    // A provider may bill whole seconds, rounded up: the hold is the ceiling of the charge, so it covers that.
    const seconds = Math.ceil(worstCaseSeconds(input.audio.bytes));
    const { result: answer, ...served } = await firstAccepted(
      run,
      (c) =>
        mediaCost(c.endpoint.pricing, {
          seconds,
          audioTokens: Math.ceil(seconds * audioTokensPerSecond),
          promptTokens: 0,
          completionTokens: Math.ceil(seconds * transcriptTokensPerSecond) + 100,
        }),
      (provider, target, c, { signal }) =>
        provider.transcribe(
          {
            audio: input.audio,
            language: input.language,
            prompt: input.prompt,
            temperature: input.temperature,
            verbose: input.verbose,
            granularities: input.granularities,
            options: input.options[c.endpoint.provider] ?? {},
          },
          target,
          signal,
        ),
    );
    const { usage, estimated } = usageOf(answer, input.audio.bytes);
    const charge = chargeFor(run, served, usage);
    await recordGeneration(deps, { ...runRecord(run, "transcription", served.candidate, false), status: "completed", usage, usageEstimated: estimated, charge });
    res.json({
      text: answer.text,
      usage: {
        cost: billedUsd(served, charge),
        input_tokens: usage.audioTokens ?? 0,
        output_tokens: usage.completionTokens,
        seconds: Math.round((usage.seconds ?? 0) * 1000) / 1000,
        total_tokens: (usage.audioTokens ?? 0) + usage.completionTokens,
      },
      ...(input.verbose
        ? {
            task: "transcribe",
            language: answer.language ?? input.language ?? "unknown",
            duration: answer.duration ?? usage.seconds,
            segments: answer.segments ?? [],
            ...(input.granularities.includes("word") && answer.words ? { words: answer.words } : {}),
          }
        : {}),
    });
  };
