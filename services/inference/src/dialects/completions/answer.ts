import { textLogprobs, type TextCompletion, type TextCompletionChunk, type TextFinishReason, type TextLogprobs, type TextUsage } from "@switchyard/contracts";
import type { Completion, CompletionChoice, PartBatch, Passthrough } from "../../generation/parts.js";
import { normalizeFinishReason, usageBody, type Accounted } from "../../accounting.js";
import { echoedOf } from "../../providers/openai-text.js";

/** What every `text_completion` object of one answer shares. */
export interface TextFrame {
  /** The generation id. */
  id: string;
  /** Unix seconds, the same for every frame of a stream. */
  created: number;
  /** The model that served the answer. */
  model: string;
  /** The provider that served it, when the answer names it. */
  provider?: string;
  /** The backend fingerprint, when the provider sent one. */
  systemFingerprint?: string | null;
}

/** How an answer is written for the caller. */
export interface TextRender {
  /**
   * The prompt to prepend to each choice's text: set for `echo` only when a chat endpoint served the
   * request. A legacy completions route echoes by itself, and its adapter hands the echo over apart from
   * the generated text (`echoedField`), to be put back in front of it here.
   */
  echoPrompt?: string;
  /** Leaves the model's reasoning out (`reasoning.exclude`). */
  hideReasoning?: boolean;
}

type ChunkChoice = TextCompletionChunk["choices"][number];
type BodyChoice = TextCompletion["choices"][number];

/** The fields that open every frame: id, object, created, model, provider and fingerprint when known. */
function head(frame: TextFrame, fingerprint: string | null | undefined) {
  return {
    id: frame.id,
    object: "text_completion" as const,
    created: frame.created,
    model: frame.model,
    ...(frame.provider ? { provider: frame.provider } : {}),
    ...(fingerprint ? { system_fingerprint: fingerprint } : {}),
  };
}

/**
 * A provider's finish reason as a legacy completion states it: chat's `tool_calls` (no tools are offered
 * here) and a provider's `error` read as `stop`; the native reason is sent beside it.
 */
export function textFinishReason(native: string | null | undefined): TextFinishReason | null {
  const normalized = normalizeFinishReason(native);
  if (normalized === null) return null;
  return normalized === "length" || normalized === "content_filter" ? normalized : "stop";
}

/** The priced usage as a legacy completion states it: chat's, with only the reasoning tokens in the completion's details. */
function textUsage(accounted: Accounted): TextUsage {
  const usage = usageBody(accounted);
  return { ...usage, completion_tokens_details: { reasoning_tokens: usage.completion_tokens_details.reasoning_tokens } };
}

/**
 * A choice's legacy logprobs (a `tokens` list beside its logprobs), or null when it has none: chat's
 * per-token entries, another shape, are not relayed here.
 */
function logprobsOf(choiceFields: Passthrough): TextLogprobs | null {
  const value = choiceFields.logprobs;
  if (value === null || value === undefined) return null;
  const parsed = textLogprobs.safeParse(value);
  return parsed.success && Array.isArray(parsed.data.tokens) ? parsed.data : null;
}

/**
 * One buffered choice as a legacy completion choice. A whole answer always states a finish reason: a provider
 * that gave none reads as `stop`, its native reason null, as Chat Completions answers it.
 */
function bodyChoice(choice: CompletionChoice, render: TextRender): BodyChoice {
  const reasoning = render.hideReasoning ? null : choice.reasoning;
  return {
    text: (render.echoPrompt ?? "") + echoedOf(choice.choiceFields) + (choice.text ?? ""),
    index: choice.index,
    logprobs: logprobsOf(choice.choiceFields),
    finish_reason: textFinishReason(choice.finishReason) ?? "stop",
    native_finish_reason: choice.finishReason,
    ...(reasoning !== null ? { reasoning } : {}),
  };
}

/** A buffered answer, priced, as the `text_completion` the caller receives. */
export function completionBody(completion: Completion, accounted: Accounted, frame: TextFrame, render: TextRender = {}): TextCompletion {
  return {
    ...head(frame, completion.systemFingerprint ?? frame.systemFingerprint),
    choices: completion.choices.map((choice) => bodyChoice(choice, render)),
    usage: textUsage(accounted),
  };
}

/** What one batch says of one choice, gathered before it is written. */
interface Gathered {
  text: string;
  reasoning: string | null;
  logprobs: TextLogprobs | null;
  finish: string | null;
}

/** The choice `index` of `gathered`, added empty on first sight so choices keep the order they came in. */
function gatheredFor(gathered: Map<number, Gathered>, index: number): Gathered {
  let entry = gathered.get(index);
  if (!entry) {
    entry = { text: "", reasoning: null, logprobs: null, finish: null };
    gathered.set(index, entry);
  }
  return entry;
}

/**
 * What each choice says in `batch`: text (the echoed prompt in its place ahead of the generated text),
 * reasoning (unless hidden), logprobs (the last entry, when a batch holds more than one) and finish.
 * Reasoning entries and tool calls have no place in this dialect.
 */
function gather(batch: PartBatch, render: TextRender): Map<number, Gathered> {
  const gathered = new Map<number, Gathered>();
  for (const part of batch) {
    if (part.type === "text") gatheredFor(gathered, part.choice).text += part.text;
    else if (part.type === "reasoning" && !render.hideReasoning) {
      const entry = gatheredFor(gathered, part.choice);
      entry.reasoning = (entry.reasoning ?? "") + part.text;
    } else if (part.type === "passthrough" && part.choiceFields) {
      const echoed = echoedOf(part.choiceFields);
      if (echoed) gatheredFor(gathered, part.choice).text += echoed;
      const logprobs = logprobsOf(part.choiceFields);
      if (logprobs) gatheredFor(gathered, part.choice).logprobs = logprobs;
    } else if (part.type === "finish") gatheredFor(gathered, part.choice).finish = part.reason;
  }
  return gathered;
}

/** The system fingerprint a batch names, if any. */
function fingerprintOf(batch: PartBatch): string | null {
  for (const part of batch) if (part.type === "metadata" && part.systemFingerprint) return part.systemFingerprint;
  return null;
}

/**
 * One provider event as a streamed `text_completion` frame: each choice's new text, its logprobs and its
 * finish. Undefined when the event says nothing the caller sees (metadata or usage only); the priced
 * usage goes in `usageChunk` at the end.
 */
export function completionChunk(batch: PartBatch, frame: TextFrame, render: TextRender = {}): TextCompletionChunk | undefined {
  const gathered = gather(batch, render);
  if (gathered.size === 0) return undefined;
  const choices: ChunkChoice[] = [];
  for (const [index, entry] of gathered) {
    choices.push({
      text: entry.text,
      index,
      logprobs: entry.logprobs,
      finish_reason: textFinishReason(entry.finish),
      native_finish_reason: entry.finish,
      ...(entry.reasoning !== null ? { reasoning: entry.reasoning } : {}),
    });
  }
  return { ...head(frame, fingerprintOf(batch) ?? frame.systemFingerprint), choices };
}

/**
 * The first frame of an echoed stream a chat endpoint serves: the prompt as choice 0's text. A legacy
 * completions route echoes by itself and needs none.
 */
export function echoChunk(frame: TextFrame, prompt: string): TextCompletionChunk {
  return { ...head(frame, frame.systemFingerprint), choices: [{ text: prompt, index: 0, logprobs: null, finish_reason: null, native_finish_reason: null }] };
}

/** The last frame before `[DONE]`: no choices, the whole priced usage. */
export function usageChunk(accounted: Accounted, frame: TextFrame): TextCompletionChunk {
  return { ...head(frame, frame.systemFingerprint), choices: [], usage: textUsage(accounted) };
}

/**
 * The in-band error that ends a stream after its first byte (the status is already 200): choice 0
 * finishes with `error` and the frame carries `error`; no `[DONE]` follows it.
 */
export function errorChunk(frame: TextFrame, code: number, message: string): TextCompletionChunk {
  return {
    ...head(frame, frame.systemFingerprint),
    choices: [{ text: "", index: 0, logprobs: null, finish_reason: "error", native_finish_reason: null }],
    error: { code, message },
  };
}
