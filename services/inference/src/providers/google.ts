import { randomUUID } from "node:crypto";
import { z } from "zod";
import { generateContentLeftOut, generateContentRequest, signatureFormat } from "./google-messages.js";
import { posted, postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { CompletionChoice, Json, PartBatch, StreamPart } from "../generation/parts.js";
import type { Detail } from "../tools/reasoning.js";
import type { ToolCall } from "../tools/run.js";
import { tokenCount } from "./answers.js";
import { UpstreamError, type ChatProvider, type UpstreamTarget, type UpstreamUsage } from "./types.js";

const count = tokenCount.nullish();
/** Gemini's tokens of one count by modality (TEXT, IMAGE, AUDIO, VIDEO, DOCUMENT). */
const modalityCounts = z.array(z.looseObject({ modality: z.string().nullish(), tokenCount: count })).nullish();
const usageMetadata = z.looseObject({
  promptTokenCount: count,
  candidatesTokenCount: count,
  thoughtsTokenCount: count,
  cachedContentTokenCount: count,
  promptTokensDetails: modalityCounts,
  candidatesTokensDetails: modalityCounts,
  cacheTokensDetails: modalityCounts,
});
type Usage = z.infer<typeof usageMetadata>;

const part = z.looseObject({
  text: z.string().nullish(),
  thought: z.boolean().nullish(),
  thoughtSignature: z.string().nullish(),
  functionCall: z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).nullish() }).nullish(),
});

const logprob = z.looseObject({ token: z.string().default(""), logProbability: z.number().default(0) });
const logprobsResult = z.looseObject({
  topCandidates: z.array(z.looseObject({ candidates: z.array(logprob).nullish() })).nullish(),
  chosenCandidates: z.array(logprob).nullish(),
});

const candidate = z.looseObject({
  index: z.number().int().nullish(),
  content: z.looseObject({ parts: z.array(part).nullish() }).nullish(),
  finishReason: z.string().nullish(),
  logprobsResult: logprobsResult.nullish(),
});
type Candidate = z.infer<typeof candidate>;

const response = z.looseObject({
  responseId: z.string().nullish(),
  candidates: z.array(candidate).nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: usageMetadata.nullish(),
  error: z.looseObject({ code: z.number().int().nullish(), message: z.string().nullish() }).nullish(),
});
type Response = z.infer<typeof response>;

/**
 * Gemini's finish reason as it came, for the gateway to map and report as the native one; only a STOP
 * after function calls is OpenAI's `tool_calls`, which the gateway cannot tell from STOP alone.
 */
function finishReason(native: string | null | undefined, calledTools: boolean): string | null {
  if (!native) return null;
  return native === "STOP" && calledTools ? "tool_calls" : native;
}

type Logprob = z.infer<typeof logprob>;
const tokenLogprob = (l: Logprob) => ({ token: l.token, logprob: l.logProbability, bytes: [...Buffer.from(l.token, "utf8")] });

/**
 * Gemini's log probabilities in OpenAI's shape: each chosen token with the likeliest tokens of its step.
 * The choice's fields, none when Gemini sent none.
 */
function logprobsOf(c: Candidate): Record<string, Json> {
  const chosen = c.logprobsResult?.chosenCandidates;
  if (!chosen?.length) return {};
  const top = c.logprobsResult?.topCandidates ?? [];
  const content = chosen.map((l, i) => ({ ...tokenLogprob(l), top_logprobs: (top[i]?.candidates ?? []).map(tokenLogprob) }));
  return { logprobs: { content, refusal: null } };
}

/** The tokens of audio in one of Gemini's counts by modality (`promptTokensDetails`, `candidatesTokensDetails`). */
const audioCount = (details: z.infer<typeof modalityCounts>): number => (details ?? []).reduce((sum, d) => sum + (d.modality === "AUDIO" ? (d.tokenCount ?? 0) : 0), 0);

/**
 * Thinking tokens are output Gemini counts apart; the gateway's completion count includes them. Audio tokens
 * are the prompt's and the answer's of modality AUDIO, parts of their counts; the prompt's read from the
 * cache are priced as cached tokens, so they are not counted as audio again.
 */
const toUsage = (u: Usage): UpstreamUsage => {
  const audio = Math.max(0, audioCount(u.promptTokensDetails) - audioCount(u.cacheTokensDetails));
  const audioOutput = audioCount(u.candidatesTokensDetails);
  return {
    promptTokens: u.promptTokenCount ?? 0,
    completionTokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
    cachedTokens: u.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    reasoningTokens: u.thoughtsTokenCount ?? 0,
    ...(audio ? { audioTokens: audio } : {}),
    ...(audioOutput ? { audioOutputTokens: audioOutput } : {}),
  };
};

const callId = () => `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;

interface Pieces {
  content: string;
  reasoning: string;
  toolCalls: ToolCall[];
  /** Thought signatures of tool calls, which Gemini wants back with the calls on the next turn. */
  signatures: Detail[];
}

/** One candidate's parts as text, reasoning and tool calls; signature entries are numbered from `firstCall`. */
function pieces(c: Candidate, firstCall: number): Pieces {
  const out: Pieces = { content: "", reasoning: "", toolCalls: [], signatures: [] };
  for (const p of c.content?.parts ?? []) {
    if (p.functionCall) {
      const id = callId();
      const index = firstCall + out.toolCalls.length;
      out.toolCalls.push({ id, type: "function", function: { name: p.functionCall.name, arguments: JSON.stringify(p.functionCall.args ?? {}) } });
      if (p.thoughtSignature) out.signatures.push({ type: "reasoning.encrypted", data: p.thoughtSignature, id, format: signatureFormat, index });
    } else if (p.thought) {
      out.reasoning += p.text ?? "";
    } else out.content += p.text ?? "";
  }
  return out;
}

/** A prompt Gemini blocked has no candidates: one empty choice that ends in `content_filter`. */
const blockedChoice = (): CompletionChoice => ({ index: 0, text: "", reasoning: null, reasoningDetails: [], toolCalls: [], finishReason: "content_filter", fields: {}, choiceFields: {} });

function choices(r: Response): CompletionChoice[] {
  const candidates = r.candidates ?? [];
  if (candidates.length === 0 && r.promptFeedback?.blockReason) return [blockedChoice()];
  return candidates.map((c, i) => {
    const p = pieces(c, 0);
    return {
      index: c.index ?? i,
      text: p.content || (p.toolCalls.length ? null : ""),
      reasoning: p.reasoning || null,
      reasoningDetails: p.signatures,
      toolCalls: p.toolCalls,
      finishReason: finishReason(c.finishReason, p.toolCalls.length > 0),
      fields: {},
      choiceFields: logprobsOf(c),
    };
  });
}

/** The call for `body`: provider, URL, headers and JSON body. */
function call(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): JsonPost {
  const model = target.upstreamModel.replace(/^models\//, "");
  const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}/models/${model}:${method}`,
    target.apiKey ? { "x-goog-api-key": target.apiKey } : {},
    posted(target, generateContentRequest(body)),
  ];
}

interface CandidateState {
  started: boolean;
  toolCalls: number;
}

/** One streamed candidate as parts: Gemini sends each function call whole, so it starts and ends at once. */
function candidateParts(c: Candidate, index: number, state: CandidateState): StreamPart[] {
  const p = pieces(c, state.toolCalls);
  const parts: StreamPart[] = [];
  if (!state.started) parts.push({ type: "passthrough", choice: index, fields: { role: "assistant" } });
  state.started = true;
  if (p.content) parts.push({ type: "text", choice: index, text: p.content });
  const logprobs = logprobsOf(c);
  if (logprobs.logprobs) parts.push({ type: "passthrough", choice: index, fields: {}, choiceFields: logprobs });
  if (p.reasoning) parts.push({ type: "reasoning", choice: index, text: p.reasoning });
  // A call's thought signature comes before the call, as a buffered answer lists it.
  for (const detail of p.signatures) parts.push({ type: "reasoning-detail", choice: index, detail });
  for (const call of p.toolCalls) {
    const callIndex = state.toolCalls++;
    parts.push(
      { type: "tool-call-start", choice: index, index: callIndex, id: call.id, name: call.function.name },
      { type: "tool-call-delta", choice: index, index: callIndex, arguments: call.function.arguments },
      { type: "tool-call-end", choice: index, index: callIndex },
    );
  }
  const finish = finishReason(c.finishReason, state.toolCalls > 0);
  if (finish) parts.push({ type: "finish", choice: index, reason: finish });
  return parts;
}

/**
 * Each streamed GenerateContentResponse becomes one batch of parts. Gemini repeats its running usage on many
 * of them, so only the last one seen is reported, once the stream has ended. A stream whose candidates never
 * gave a finish reason (nor was the prompt blocked) was cut short, however cleanly its body ended.
 */
async function* batches(events: AsyncIterable<string>): AsyncGenerator<PartBatch> {
  let usage: Usage | undefined;
  let finished = false;
  let named = false;
  const states = new Map<number, CandidateState>();
  for await (const data of events) {
    let parsed;
    try {
      parsed = response.safeParse(JSON.parse(data));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) throw new UpstreamError("google sent a chunk that does not parse", 502, false);
    const r = parsed.data;
    if (r.error) throw new UpstreamError(`google: ${r.error.message ?? "error mid-stream"}`, r.error.code ?? 502, false);
    usage = r.usageMetadata ?? usage;
    // The answer's id comes once, with the first batch of a chunk that carries one.
    const id: StreamPart[] = !named && r.responseId ? [{ type: "metadata", id: r.responseId }] : [];
    const candidates = r.candidates ?? [];
    if (candidates.length === 0) {
      if (r.promptFeedback?.blockReason) {
        finished = true;
        named ||= id.length > 0;
        yield [...id, { type: "passthrough", choice: 0, fields: { role: "assistant" } }, { type: "text", choice: 0, text: "" }, { type: "finish", choice: 0, reason: "content_filter" }];
      }
      continue;
    }
    const parts = candidates.flatMap((c, i) => {
      const index = c.index ?? i;
      const state = states.get(index) ?? { started: false, toolCalls: 0 };
      states.set(index, state);
      return candidateParts(c, index, state);
    });
    finished ||= parts.some((p) => p.type === "finish");
    named ||= id.length > 0;
    yield [...id, ...parts];
  }
  if (!finished) throw new UpstreamError("google's stream ended before a finish reason", 502, false);
  if (usage) yield [{ type: "usage", usage: toUsage(usage) }];
}

/** Google's Gemini API (generativelanguage v1beta). */
export const google: ChatProvider = {
  leftOut: generateContentLeftOut,
  async complete(body, target, signal) {
    const parsed = response.safeParse(await postJsonAnswer(...call(body, target, false), signal));
    if (!parsed.success || (!parsed.data.candidates?.length && !parsed.data.promptFeedback)) {
      throw new UpstreamError(`${target.provider} sent a response that is not a GenerateContentResponse`, 502, true);
    }
    return {
      id: parsed.data.responseId ?? null,
      choices: choices(parsed.data),
      usage: parsed.data.usageMetadata ? toUsage(parsed.data.usageMetadata) : undefined,
      systemFingerprint: null,
      serviceTier: null,
    };
  },
  async stream(body, target, signal) {
    const res = await postJson(...call(body, target, true), signal);
    return batches(sseData(res.body));
  },
};
