import { post, sseData, type UpstreamResponse } from "@switchyard/upstream";
import { z } from "zod";
import { streamEvent } from "./stream-events.js";
import type { SpeechCall, SpeechPart, SpeechProvider, UpstreamTarget } from "./types.js";

/** OpenAI requires a voice; a request that names none gets its first. */
const defaultVoice = "alloy";

const event = z.looseObject({
  type: z.string(),
  audio: z.string().nullish(),
  usage: z.looseObject({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).nullish(),
  error: z.looseObject({ message: z.string().nullish() }).nullish(),
});

/** The request's fields, only those the call sets, then the provider's own options. */
function fields(call: SpeechCall, target: UpstreamTarget): Record<string, unknown> {
  const body: Record<string, unknown> = { model: target.upstreamModel, input: call.input, voice: call.voice ?? defaultVoice, response_format: call.format };
  if (call.speed !== undefined) body.speed = call.speed;
  if (call.instructions !== undefined) body.instructions = call.instructions;
  if (call.events) body.stream_format = "sse";
  // Options add what the request does not decide; they never replace its fields.
  for (const [key, value] of Object.entries(call.options)) if (!(key in body) && value !== undefined && value !== null) body[key] = value;
  return body;
}

async function* rawAudio(res: UpstreamResponse): AsyncGenerator<SpeechPart> {
  for await (const chunk of res.body) if (chunk.length > 0) yield { type: "audio", bytes: chunk };
}

/** `speech.audio.delta` events carry base64 audio; `speech.audio.done`, the last, carries the usage. */
async function* eventAudio(res: UpstreamResponse, provider: string): AsyncGenerator<SpeechPart> {
  // Base64 and numbers hold no quotes: only the done event's type can match.
  for await (const data of sseData(res.body, (d) => d.includes('"speech.audio.done"'))) {
    const e = streamEvent(data, event, provider);
    if (e.type === "speech.audio.delta" && e.audio) yield { type: "audio", bytes: Buffer.from(e.audio, "base64") };
    if (e.type === "speech.audio.done" && e.usage) yield { type: "usage", usage: { inputTokens: e.usage.input_tokens, outputTokens: e.usage.output_tokens } };
  }
}

/**
 * OpenAI's `/audio/speech`, also spoken by OpenAI-compatible speech servers. The audio comes as the
 * body's bytes, or, when events were asked for, as `speech.audio.*` events; what the provider answered
 * decides which, so a server that ignores `stream_format` still streams its audio.
 */
export const openAiSpeech: SpeechProvider = {
  async speak(call, target, signal) {
    const res = await post(
      target.provider,
      `${target.baseUrl.replace(/\/$/, "")}/audio/speech`,
      { "content-type": "application/json", ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) },
      JSON.stringify(fields(call, target)),
      signal,
    );
    const type = String(res.headers["content-type"] ?? "").toLowerCase();
    return type.startsWith("text/event-stream") ? eventAudio(res, target.provider) : rawAudio(res);
  },
};
