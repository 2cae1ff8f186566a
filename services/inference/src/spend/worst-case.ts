import type { ResolvedEndpoint } from "@switchyard/contracts";
import { toPico } from "@switchyard/runtime";
import { choicesAsked, outputLimit } from "../request-body.js";
import { imageTokens } from "./image-tokens.js";
import { audioTokenBound } from "./prompt-audio.js";
import { possiblePricings } from "./service-tier.js";

/** What a file in the prompt is reserved at: its payload says little about its tokens. */
export const mediaTokenAllowance = 2000;

/**
 * Where a message part names an image, by the member that holds it and the member that holds that: chat's
 * `image_url.url`, Anthropic's `source.data` and `source.url`, the Responses `image_url` of an `input_image`.
 * A data URL or base64 is its payload; other text there is a URL the provider fetches.
 */
const imageMember = (key: string, parent: string) => (key === "url" && (parent === "image_url" || parent === "source")) || key === "image_url" || (key === "data" && parent === "source");

/**
 * The tokens a string in the messages is counted at: an audio clip (`input_audio.data`, chat's part and the
 * Responses part translated to it) at the bound of its length; an image at the most tokens a provider bills
 * for its size (`imageTokens`: a base64 payload by the size its header states, a URL or an unreadable payload
 * at the allowance for an image of unknown size); a file's payload (`file.file_data`) at the flat allowance;
 * other text at its UTF-8 bytes. Text of 256 bytes or fewer that is not a URL, and text that merely starts
 * with `data:` elsewhere, or sits under another member named `data`, is read as text and counted whole.
 */
function messageStringTokens(key: string, parent: string, value: string, measure: Measure): number {
  if (key === "data" && parent === "input_audio") {
    const tokens = audioTokenBound(value);
    measure.audio += tokens;
    return tokens;
  }
  if (imageMember(key, parent)) {
    const base64 = key === "data" || value.startsWith("data:");
    if (!base64 || value.length > 256) return imageTokens(value, measure.detail, base64);
  }
  if (key === "file_data" && parent === "file" && value.length > 256) return mediaTokenAllowance;
  return Buffer.byteLength(value, "utf8");
}

/**
 * Parts whose tokens nothing in the request bounds: a document or file (a PDF's pages are read as text and
 * as images, however few its bytes), a video (tokens by its length). Chat's, Anthropic's and Responses'
 * names for them. Images and audio are bounded: an image is read for its size, audio for its length.
 */
const unsizedParts = new Set(["file", "input_file", "document", "video_url", "input_video"]);

/** What measuring a prompt found besides its bytes. */
interface Measure {
  /** Media payloads count as media (`messageStringTokens`): in messages, never in tools or response formats. */
  media: boolean;
  /** It holds a part whose tokens only the model's context bounds. */
  unsized: boolean;
  /** Of the tokens counted, those of audio clips (`audioTokenBound`), which may be billed at the audio price. */
  audio: number;
  /** The `detail` of the object whose members are being counted: an image's sits beside its URL. */
  detail?: string;
}

/**
 * The UTF-8 bytes of a value as JSON, less the backslashes of its escapes, media payloads as media (audio by
 * its length, images by their size, files at the flat allowance): counted without writing the JSON, which for
 * a long conversation took more CPU than the rest of the request. Numbers count as JSON writes them (`1e20`
 * as 21 digits), undefined members as JSON leaves them out.
 */
function jsonBytes(value: unknown, key: string, parent: string, measure: Measure): number {
  switch (typeof value) {
    case "string":
      return 2 + (measure.media ? messageStringTokens(key, parent, value, measure) : Buffer.byteLength(value, "utf8"));
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    case "object": {
      if (value === null) return 4;
      if (Array.isArray(value)) {
        // Brackets and the commas between items; a missing item is written as null.
        let bytes = 1 + Math.max(value.length, 1);
        for (let i = 0; i < value.length; i++) bytes += value[i] === undefined || typeof value[i] === "function" ? 4 : jsonBytes(value[i], "", key, measure);
        return bytes;
      }
      let bytes = 0;
      const outer = measure.detail;
      const detail = (value as Record<string, unknown>).detail;
      measure.detail = typeof detail === "string" ? detail : undefined;
      for (const name in value) {
        const member = (value as Record<string, unknown>)[name];
        if (member === undefined || typeof member === "function") continue;
        if (name === "type" && typeof member === "string" && unsizedParts.has(member)) measure.unsized = true;
        // A comma or the opening brace, the quoted name and its colon.
        bytes += 1 + Buffer.byteLength(name, "utf8") + 3 + jsonBytes(member, name, key, measure);
      }
      measure.detail = outer;
      return bytes === 0 ? 2 : bytes + 1;
    }
    default:
      return 0;
  }
}

/**
 * An upper bound on the prompt's tokens: the UTF-8 bytes as JSON, less escapes (a model reads the text they
 * stand for), of what a provider reads besides the messages' own text too: the tools, the response format's
 * schema and a predicted output. Images in messages count at the tokens their size may be billed
 * (`imageTokens`), files at a flat allowance, audio at the tokens its length may be billed (`audioTokenBound`).
 * No tokenizer makes a token of less than a byte, and the JSON punctuation covers each message's framing
 * tokens. A prompt with a document, file or video is bounded by the model's context instead (`unsized`).
 */
export function promptTokenBound(body: Record<string, unknown>): { bytes: number; unsized: boolean; audio: number } {
  const measure: Measure = { media: false, unsized: false, audio: 0 };
  // These members as one object, counted as jsonBytes counts one: a brace or comma, the quoted name and its
  // colon, the value; then the closing brace. Media counts as media in the messages alone.
  let bytes = 0;
  for (const name of ["messages", "tools", "response_format", "prediction"]) {
    if (body[name] === undefined) continue;
    measure.media = name === "messages";
    bytes += 1 + name.length + 3 + jsonBytes(body[name], name, "", measure);
  }
  return { bytes: bytes === 0 ? 2 : bytes + 1, unsized: measure.unsized, audio: measure.audio };
}

/**
 * The prompt's tokens as the gateway estimates them before a provider counts them: a token per four bytes
 * of its bound, as `estimateTokens` counts characters. Price routing compares the prices a prompt of that
 * size is charged.
 */
export const estimatedPromptTokens = (body: Record<string, unknown>): number => Math.ceil(promptTokenBound(body).bytes / 4);

export interface WorstCase {
  promptTokens: number;
  /** The completion tokens one choice may produce: the request's own max (`outputLimit`), else the endpoint's, else the context. */
  completionTokens: number;
  /** The choices asked for (`n`) that the endpoint can produce: each may produce `completionTokens`. */
  choices: number;
  /** Price of one completion token at the dearest rate (reasoning may cost more). */
  completionPrice: bigint;
  /** Prompt and per-request charges, fixed once the request is sent. */
  fixed: bigint;
  amount: bigint;
}

const dearest = (...prices: Array<string | undefined>) => prices.reduce((max, p) => (p === undefined ? max : toPico(p) > max ? toPico(p) : max), 0n);

/** Adapters whose API answers with one choice whatever `n` asks: Anthropic's Messages API has no `n`. */
const oneChoice = new Set(["anthropic"]);

/**
 * The most one attempt on this endpoint can cost: what its hold reserves. Without a limit in the request or
 * the catalog, a choice may fill the whole context: the prompt's bound in bytes is the most tokens it may
 * have, not the fewest, so the context it leaves may be nearly all of it.
 */
export function worstCase(endpoint: ResolvedEndpoint, body: Record<string, unknown>): WorstCase {
  const { bytes, unsized, audio } = promptTokenBound(body);
  // A document's tokens are known only to the provider: it can fill the context, and is held so.
  const promptTokens = unsized ? Math.max(bytes, endpoint.context_length) : bytes;
  const completionTokens = Math.max(1, outputLimit(body, endpoint.max_completion_tokens) ?? endpoint.max_completion_tokens ?? endpoint.context_length);
  const pricings = possiblePricings(endpoint, body.service_tier, promptTokens);
  // A spoken answer's tokens may be billed at the audio output price.
  const spoken = Array.isArray(body.modalities) && body.modalities.includes("audio");
  const completionPrice = dearest(...pricings.flatMap((p) => [p.completion, p.internal_reasoning, spoken ? p.audio_output : undefined]));
  // The clip's tokens may be billed at the audio price, the rest of the prompt's at the dearest other.
  const promptPrice = dearest(...pricings.flatMap((p) => [p.prompt, p.input_cache_write, p.input_cache_write_1h]));
  const audioPrice = dearest(...pricings.flatMap((p) => [p.prompt, p.input_cache_write, p.input_cache_write_1h, p.audio]));
  const fixed = BigInt(promptTokens - audio) * promptPrice + BigInt(audio) * audioPrice + dearest(...pricings.map((p) => p.request));
  const choices = oneChoice.has(endpoint.adapter) ? 1 : choicesAsked(body);
  return { promptTokens, completionTokens, choices, completionPrice, fixed, amount: fixed + BigInt(completionTokens) * BigInt(choices) * completionPrice };
}

/** The completion tokens a choice may have for `remaining` to pay for every choice once the fixed part is paid. */
export function affordableTokens(worst: WorstCase, remaining: bigint): number {
  const left = remaining - worst.fixed;
  if (left <= 0n || worst.completionPrice === 0n) return 0;
  const tokens = left / (worst.completionPrice * BigInt(worst.choices));
  return tokens > BigInt(worst.completionTokens) ? worst.completionTokens : Number(tokens);
}
