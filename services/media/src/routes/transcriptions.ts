import { enforceFindings, filterOptions, filterPrompt, mergeFindings } from "@switchyard/upstream";
import type { RequestHandler } from "express";
import { withPreset } from "../body.js";
import type { MediaDeps } from "../deps.js";
import type { TranscriptionProvider } from "../providers/types.js";
import { recordGeneration } from "../record.js";
import { modelList } from "../resolution.js";
import { billedUsd, chargeFor, firstAccepted, inferenceCaller, runRecord, startRun } from "../run.js";
import { readTranscription, type TranscriptionInput } from "../transcription/request.js";
import { askedUsage, transcriptionUsage, worstCase } from "../transcription/usage.js";

/** Why a wire format cannot carry what the request sets; undefined when it can. */
const unfitFor = (input: TranscriptionInput) => (provider: TranscriptionProvider) => {
  if (input.verbose && !provider.verbose) return "no timestamps for verbose_json";
  if (input.prompt !== undefined && !provider.prompts) return "no prompt support";
  if (input.temperature !== undefined && !provider.temperature) return "no temperature support";
  return undefined;
};

/** `POST /audio/transcriptions`: check, hold the worst case, try the endpoints in order, answer, charge. */
export const transcriptionsRoute =
  (deps: MediaDeps): RequestHandler =>
  async (req, res) => {
    const caller = inferenceCaller(res);
    const input = await readTranscription(req, deps.maxAudioBytes, (body, takes, form) => withPreset(deps, req, caller, body, { takes, route: "/audio/transcriptions", form }));
    const run = await startRun(deps, req, res, {
      models: modelList(input.model, input.models),
      preset: input.preset,
      modality: "transcription",
      preferences: input.preferences,
      sessionId: input.sessionId,
      streamed: false,
      providers: deps.transcribers,
      unfit: unfitFor(input),
      trace: input.trace,
      user: input.user,
    });
    // The prompt and the provider options (Whisper's form takes a prompt there too) are text the caller wrote:
    // the guardrails' content filters apply to them before anything is held.
    const prompt = input.prompt === undefined ? undefined : filterPrompt(run.filters, input.prompt);
    const options = filterOptions(run.filters, input.options);
    run.findings = mergeFindings([prompt?.findings ?? [], options.findings]);
    enforceFindings(run.findings, "transcriptions", deps.logger);
    if (prompt) input.prompt = prompt.value;
    input.options = options.value;
    const audio = input.audio.bytes;
    const { result: answer, ...served } = await firstAccepted(run, { worstCase: worstCase(audio), asked: askedUsage(audio) }, (provider, target, c, { signal }) =>
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
    const { usage, estimated } = transcriptionUsage(answer, audio);
    const charge = chargeFor(run, served, usage);
    await recordGeneration(deps, { ...runRecord(run, served.candidate, false), status: "completed", usage, usageEstimated: estimated, charge });
    res.json({
      text: answer.text,
      usage: {
        cost: billedUsd(served, charge),
        input_tokens: usage.audioTokens ?? 0,
        output_tokens: usage.completionTokens,
        seconds: Math.round((usage.seconds ?? 0) * 1000) / 1000,
        total_tokens: (usage.audioTokens ?? 0) + usage.completionTokens,
        is_byok: served.candidate.byokKey !== undefined,
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
