import { extended } from "@switchyard/runtime";
import { z } from "zod";
import { posted, postJson, postJsonAnswer, sseData, type JsonPost } from "@switchyard/upstream";
import type { Completion, CompletionChoice, Json, PartBatch, Passthrough, StreamPart } from "../generation/parts.js";
import { answeredError, statusOfCode } from "./answers.js";
import { answerMode, openAiUsage, toUsage } from "./openai-compatible.js";
import { UpstreamError, type UpstreamTarget } from "./types.js";

const choice = z.looseObject({
  index: z.number().int().min(0).nullish(),
  text: z.string().nullish(),
  /** OpenRouter's legacy route answers a model's reasoning beside its text. */
  reasoning: z.string().nullish(),
  finish_reason: z.string().nullish(),
});

const textCompletion = z.looseObject({
  id: z.string().nullish(),
  choices: z.array(choice).default([]),
  usage: openAiUsage,
  system_fingerprint: z.string().nullish(),
  service_tier: z.string().nullish(),
  /** OpenRouter-style servers answer a failure, or end a failing stream, with the error in the body. */
  error: z.looseObject({ code: z.unknown(), message: z.string().nullish() }).nullish(),
});

type UpstreamChoice = z.infer<typeof choice>;
type UpstreamText = z.infer<typeof textCompletion>;

/**
 * The choice field that carries the prompt a server echoed (`echo`). A server sends the echo and the generated
 * text as one `text`, but only the generated text is the model's answer: it alone may be estimated as
 * completion tokens when the provider reports no usage. The echo travels beside it, and the legacy dialect's
 * renderer puts it back in front of the text the caller gets.
 */
export const echoedField = "echoed_prompt";

/** The echoed prompt a choice's fields carry; empty when they carry none. */
export function echoedOf(choiceFields: Passthrough): string {
  const echoed = choiceFields[echoedField];
  return typeof echoed === "string" ? echoed : "";
}

/** A piece of a choice's text, split into the echoed prompt it holds and the generated text after it. */
type Split = (choice: number, text: string) => { echoed: string; generated: string };

/**
 * Splits each choice's text into the prompt the server echoes and what follows it, piece by piece: a stream
 * may echo the prompt over several chunks, or in front of its first words. Only the prompt as sent is taken
 * as echo; once a piece stops matching it (a server that writes the prompt back from its tokens differently),
 * the rest of the choice's text is the model's.
 */
function echoSplitter(body: Record<string, unknown>): Split {
  const prompt = body.echo === true && typeof body.prompt === "string" ? body.prompt : "";
  const pending = new Map<number, string>();
  return (index, text) => {
    const left = pending.get(index) ?? prompt;
    if (left === "") return { echoed: "", generated: text };
    if (text.startsWith(left)) {
      pending.set(index, "");
      return { echoed: left, generated: text.slice(left.length) };
    }
    if (left.startsWith(text)) {
      pending.set(index, left.slice(text.length));
      return { echoed: text, generated: "" };
    }
    pending.set(index, "");
    return { echoed: "", generated: text };
  };
}

/**
 * A choice's fields beyond its text, reasoning, index and finish reason (`logprobs`, a server's own extras),
 * as the provider sent them. They were read from JSON text, so they are JSON.
 */
function choiceFieldsOf(c: UpstreamChoice): Passthrough {
  const { index: _index, text: _text, reasoning: _reasoning, finish_reason: _finish, ...rest } = c;
  const fields: { [field: string]: Json } = {};
  for (const [name, value] of Object.entries(rest)) if (value !== undefined) fields[name] = value as Json;
  return fields;
}

/** The call for `body`: provider, the legacy completions URL, headers and JSON body with the endpoint's model and the answer mode. */
function call(body: Record<string, unknown>, target: UpstreamTarget, stream: boolean): JsonPost {
  return [
    target.provider,
    `${target.baseUrl.replace(/\/$/, "")}/completions`,
    target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
    posted(target, extended(body, { model: target.upstreamModel, ...answerMode(stream) })),
  ];
}

/** One buffered choice as the gateway holds it: its text is what the model generated, the echo a choice field. */
function toChoice(c: UpstreamChoice, position: number, split: Split): CompletionChoice {
  const index = c.index ?? position;
  const { echoed, generated } = typeof c.text === "string" ? split(index, c.text) : { echoed: "", generated: null };
  return {
    index,
    text: generated,
    reasoning: c.reasoning || null,
    reasoningDetails: [],
    toolCalls: [],
    finishReason: c.finish_reason ?? null,
    fields: {},
    choiceFields: echoed ? { ...choiceFieldsOf(c), [echoedField]: echoed } : choiceFieldsOf(c),
  };
}

/** A buffered answer to `body` as the gateway holds it. */
function toCompletion(c: UpstreamText, body: Record<string, unknown>): Completion {
  const split = echoSplitter(body);
  return {
    id: c.id ?? null,
    choices: c.choices.map((each, position) => toChoice(each, position, split)),
    usage: toUsage(c.usage),
    systemFingerprint: c.system_fingerprint ?? null,
    serviceTier: c.service_tier ?? null,
  };
}

/**
 * The parts one streamed choice says: its reasoning, the echoed prompt (as a choice field, ahead of the text
 * it came before), the generated text, its other fields (logprobs), its finish.
 */
function choiceParts(c: UpstreamChoice, position: number, split: Split): StreamPart[] {
  const index = c.index ?? position;
  const parts: StreamPart[] = [];
  if (c.reasoning) parts.push({ type: "reasoning", choice: index, text: c.reasoning });
  const { echoed, generated } = split(index, c.text ?? "");
  if (echoed) parts.push({ type: "passthrough", choice: index, fields: {}, choiceFields: { [echoedField]: echoed } });
  if (generated) parts.push({ type: "text", choice: index, text: generated });
  const choiceFields = choiceFieldsOf(c);
  if (Object.values(choiceFields).some((value) => value !== null)) parts.push({ type: "passthrough", choice: index, fields: {}, choiceFields });
  if (c.finish_reason) parts.push({ type: "finish", choice: index, reason: c.finish_reason });
  return parts;
}

/** What the stream has said of itself so far, so that metadata is sent once, or again when it changes. */
interface Seen {
  id: string | null;
  fingerprint: string | null;
  tier: string | null;
}

/** A metadata part when the chunk names an id, fingerprint or tier not yet seen; undefined otherwise. */
function metadataPart(c: UpstreamText, seen: Seen): StreamPart | undefined {
  const id = c.id ?? seen.id;
  const fingerprint = c.system_fingerprint ?? seen.fingerprint;
  const tier = c.service_tier ?? seen.tier;
  if (id === seen.id && fingerprint === seen.fingerprint && tier === seen.tier) return undefined;
  Object.assign(seen, { id, fingerprint, tier });
  return { type: "metadata", id, systemFingerprint: fingerprint, serviceTier: tier };
}

/** The parts of one streamed chunk, in order: metadata, then each choice's, then usage. */
function chunkParts(c: UpstreamText, seen: Seen, split: Split): StreamPart[] {
  const parts: StreamPart[] = [];
  const metadata = metadataPart(c, seen);
  if (metadata) parts.push(metadata);
  c.choices.forEach((each, position) => parts.push(...choiceParts(each, position, split)));
  const counted = toUsage(c.usage);
  if (counted) parts.push({ type: "usage", usage: counted });
  return parts;
}

/** Parses one event's data; an event that is not a text completion chunk fails the stream. */
function parseChunk(data: string, provider: string): UpstreamText {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    json = undefined;
  }
  const parsed = textCompletion.safeParse(json);
  if (!parsed.success) throw new UpstreamError(`${provider} sent a chunk that does not parse`, 502, false);
  return parsed.data;
}

/** A legacy completions adapter: buffered and streamed calls answering in the gateway's own parts. */
export interface TextProvider {
  complete(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<Completion>;
  /** Resolves once the provider has accepted the request (its headers arrived); throws before that. */
  stream(body: Record<string, unknown>, target: UpstreamTarget, signal: AbortSignal): Promise<AsyncIterable<PartBatch>>;
}

/** OpenAI's legacy text completions route (`/completions`), spoken by OpenAI, vLLM and other servers. */
export const openAiText: TextProvider = {
  async complete(body, target, signal) {
    const parsed = textCompletion.safeParse(await postJsonAnswer(...call(body, target, false), signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a text completion`, 502, true);
    // As on the chat wire: an error in a 200's body is the provider's failure, and a body without a choice no answer.
    const { error, choices } = parsed.data;
    if (error) throw answeredError(target.provider, statusOfCode(error.code), error.message ?? "error");
    if (choices.length === 0) throw new UpstreamError(`${target.provider} sent a response without a choice`, 502, true);
    return toCompletion(parsed.data, body);
  },
  async stream(body, target, signal) {
    const res = await postJson(...call(body, target, true), signal);
    const events = res.body;
    return (async function* (): AsyncGenerator<PartBatch> {
      const seen: Seen = { id: null, fingerprint: null, tier: null };
      const split = echoSplitter(body);
      let ended = false;
      for await (const data of sseData(events)) {
        const chunk = parseChunk(data, target.provider);
        if (chunk.error) throw new UpstreamError(`${target.provider}: ${chunk.error.message ?? "error mid-stream"}`, statusOfCode(chunk.error.code), false);
        const parts = chunkParts(chunk, seen, split);
        ended ||= parts.some((p) => p.type === "usage" || p.type === "finish");
        if (parts.length > 0) yield parts;
      }
      // Neither a finish reason nor usage: the stream was cut short, as on the chat wire.
      if (!ended) throw new UpstreamError(`${target.provider}'s stream ended before a finish reason or usage`, 502, false);
    })();
  },
};
