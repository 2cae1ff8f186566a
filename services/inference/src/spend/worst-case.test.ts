import type { ResolvedEndpoint } from "@switchyard/contracts";
import { picoToDecimal } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { pcmWav } from "../../../../tests/support/wav.js";
import { imageTokenBound, unreadImageTokens } from "./image-tokens.js";
import { audioTokensPerSecond } from "./prompt-audio.js";
import { affordableTokens, estimatedPromptTokens, promptTokenBound, worstCase } from "./worst-case.js";

const endpoint = (pricing: Record<string, string>, limits: Partial<ResolvedEndpoint> = {}) =>
  ({ pricing: { prompt: "0", completion: "0", ...pricing }, context_length: 8000, max_completion_tokens: null, ...limits }) as ResolvedEndpoint;
const hello = { messages: [{ role: "user", content: "Say hello" }] };

/** Silent 16-bit mono PCM WAV at 16 kHz: 32,000 bytes a second. */
const wav = (seconds: number): Buffer => pcmWav(16_000, seconds * 16_000);

describe("worst case of an attempt", () => {
  it("bounds prompt tokens by bytes, so no tokenizer can count more", () => {
    const text = "héllo wörld ✓ ".repeat(50);
    const bound = promptTokenBound({ messages: [{ role: "user", content: text }] }).bytes;
    expect(bound).toBeGreaterThanOrEqual(Buffer.byteLength(text, "utf8"));
    expect(bound).toBeLessThan(Buffer.byteLength(text, "utf8") + 100);
  });

  it("counts a prompt as the bytes of its JSON, less the backslashes of escapes", () => {
    const bodies: Array<Record<string, unknown>> = [
      hello,
      { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "héllo ✓" }], name: "ann" }], tools: [] },
      { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }], tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {}, required: [] } } }] },
      { messages: [{ role: "user", content: "x", skipped: undefined }], tools: [{ n: [1, 2.5, -3, true, false, null] }] },
    ];
    for (const body of bodies) expect(promptTokenBound(body)).toEqual({ unsized: false, audio: 0, bytes: Buffer.byteLength(JSON.stringify({ messages: body.messages, tools: body.tools }), "utf8") });
    // Two line breaks and two quotes: the model reads 7 bytes where the JSON spends 11.
    const escaped = { messages: [{ role: "user", content: 'a\nb\n"c"' }] };
    expect(promptTokenBound(escaped).bytes).toBe(Buffer.byteLength(JSON.stringify(escaped), "utf8") - 4);
  });

  it("counts numbers as JSON writes them, not as the client wrote them", () => {
    const body = JSON.parse('{"messages":[{"role":"user","content":"hi"}],"tools":[{"limits":[1e20,1e20,1e20]}]}') as Record<string, unknown>;
    expect(promptTokenBound(body).bytes).toBe(Buffer.byteLength(JSON.stringify({ messages: body.messages, tools: body.tools }), "utf8"));
    expect(promptTokenBound(body).bytes).toBeGreaterThan(3 * 21);
  });

  it("reserves an image of unknown size at the allowance for one instead of the size of its payload", () => {
    const image = `data:image/png;base64,${"A".repeat(100_000)}`;
    const body = { messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: image } }] }] };
    const bound = promptTokenBound(body).bytes;
    expect(bound).toBeGreaterThan(unreadImageTokens);
    expect(bound).toBeLessThan(unreadImageTokens + 200);
  });

  it("reserves an image at the tokens its size may be billed, wherever the request puts it", () => {
    // A 3072×3072 PNG: Gemini alone bills 16 tiles of 258 tokens, above the 2,000 a file is held at.
    const header = Buffer.alloc(30_000);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0);
    header.writeUInt32BE(13, 8);
    header.write("IHDR", 12, "latin1");
    header.writeUInt32BE(3072, 16);
    header.writeUInt32BE(3072, 20);
    const base64 = header.toString("base64");
    const tokens = imageTokenBound(3072, 3072);
    expect(tokens).toBeGreaterThanOrEqual(16 * 258);
    const parts = [
      { type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: base64 } },
      { type: "input_image", image_url: `data:image/png;base64,${base64}` },
    ];
    for (const part of parts) {
      const bound = promptTokenBound({ messages: [{ role: "user", content: [part] }] }).bytes;
      expect(bound).toBeGreaterThanOrEqual(tokens);
      expect(bound).toBeLessThan(tokens + 200);
    }
    // OpenAI's detail original reads up to 10,000 patches: 96 × 96 here.
    const original = promptTokenBound({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${base64}`, detail: "original" } }] }] }).bytes;
    expect(original).toBeGreaterThanOrEqual(96 * 96);
    expect(original).toBeLessThan(96 * 96 + 200);
  });

  it("reserves an image by URL at the allowance for an image of unknown size, not at the bytes of its URL", () => {
    const parts = [
      { type: "image_url", image_url: { url: "https://a.example/cat.png" } },
      { type: "image", source: { type: "url", url: "https://a.example/cat.png" } },
      { type: "input_image", image_url: "https://a.example/cat.png" },
    ];
    for (const part of parts) {
      const bound = promptTokenBound({ messages: [{ role: "user", content: [part] }] }).bytes;
      expect(bound).toBeGreaterThanOrEqual(unreadImageTokens);
      expect(bound).toBeLessThan(unreadImageTokens + 200);
    }
  });

  it("counts text that only looks like media whole: a data: prefix in text, a member named data elsewhere", () => {
    const long = `data:${"x".repeat(100_000)}`;
    const asText = [
      { messages: [{ role: "user", content: long }] },
      { messages: [{ role: "user", content: [{ type: "text", text: long }] }] },
      { messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters: { type: "object", data: long } } }] },
      { messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters: { image_url: { url: long } } } }] },
    ];
    for (const body of asText) expect(promptTokenBound(body).bytes).toBeGreaterThan(100_000);
    // Each image where it is one counts as an image, here of unknown size.
    const media = [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(100_000) } },
      { type: "input_image", image_url: long },
    ];
    for (const part of media) expect(promptTokenBound({ messages: [{ role: "user", content: [part] }] }).bytes).toBeLessThan(unreadImageTokens + 200);
    // A member named input_audio in a tool's schema is not a clip.
    const schema = { messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", parameters: { input_audio: { data: long } } } }] };
    expect(promptTokenBound(schema).bytes).toBeGreaterThan(100_000);
  });

  it("holds audio in the prompt at the tokens its length may be billed, not at a flat allowance", () => {
    const clip = (seconds: number) => ({ messages: [{ role: "user", content: [{ type: "text", text: "What is said?" }, { type: "input_audio", input_audio: { data: wav(seconds).toString("base64"), format: "wav" } }] }] });
    // Five minutes are 9,600 tokens at Gemini's 32 a second: far above the 2,000 a file is held at.
    const five = promptTokenBound(clip(300)).bytes;
    expect(five).toBeGreaterThanOrEqual(300 * audioTokensPerSecond);
    expect(five).toBeLessThan(300 * audioTokensPerSecond + 200);
    // Thirty seconds of 16 kHz WAV, 960 KB, are held near 960 tokens, not at their bytes.
    const thirty = promptTokenBound(clip(30)).bytes;
    expect(thirty).toBeGreaterThanOrEqual(30 * audioTokensPerSecond);
    expect(thirty).toBeLessThan(30 * audioTokensPerSecond + 200);
    // The hold prices them as prompt tokens.
    const worst = worstCase(endpoint({ prompt: "0.000001" }), { ...clip(300), max_tokens: 10 });
    expect(worst.promptTokens).toBe(five);
    expect(worst.fixed).toBe(BigInt(five) * 1_000_000n);
  });

  it("holds the clip's audio tokens at the dearer of the prompt and audio prices, the rest of the prompt at the prompt's", () => {
    const body = { messages: [{ role: "user", content: [{ type: "text", text: "What is said?" }, { type: "input_audio", input_audio: { data: wav(10).toString("base64"), format: "wav" } }] }], max_tokens: 10 };
    const { bytes, audio } = promptTokenBound(body);
    expect(audio).toBe(10 * audioTokensPerSecond);
    const dear = worstCase(endpoint({ prompt: "0.000001", audio: "0.000005" }), body);
    expect(dear.fixed).toBe(BigInt(bytes - audio) * 1_000_000n + BigInt(audio) * 5_000_000n);
    // An audio price below the prompt's: the prompt's holds them.
    const cheap = worstCase(endpoint({ prompt: "0.000001", audio: "0.0000005" }), body);
    expect(cheap.fixed).toBe(BigInt(bytes) * 1_000_000n);
  });

  it("holds a spoken answer's tokens at the audio output price when it is dearer", () => {
    const pricing = { prompt: "0", completion: "0.000002", audio_output: "0.000008" };
    expect(worstCase(endpoint(pricing), { ...hello, max_tokens: 10 }).completionPrice).toBe(2_000_000n);
    expect(worstCase(endpoint(pricing), { ...hello, max_tokens: 10, modalities: ["text", "audio"] }).completionPrice).toBe(8_000_000n);
  });

  it("counts what a provider reads beside the messages: the response format's schema and a predicted output", () => {
    const long = "y".repeat(100_000);
    const hi = [{ role: "user", content: "hi" }];
    expect(promptTokenBound({ messages: hi, response_format: { type: "json_schema", json_schema: { name: "r", schema: { description: long } } } }).bytes).toBeGreaterThan(100_000);
    expect(promptTokenBound({ messages: hi, prediction: { type: "content", content: long } }).bytes).toBeGreaterThan(100_000);
  });

  it("holds a prompt with a document, file or video at the model's context: nothing in the request bounds its tokens", () => {
    const pdfByUrl = { messages: [{ role: "user", content: [{ type: "text", text: "Sum up" }, { type: "file", file: { filename: "a.pdf", file_data: "https://a.example/a.pdf" } }] }], max_tokens: 100 };
    const anthropicDocument = { messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "file_1" } }] }], max_tokens: 100 };
    const video = { messages: [{ role: "user", content: [{ type: "video_url", video_url: { url: "https://a.example/v.mp4" } }] }], max_tokens: 100 };
    for (const body of [pdfByUrl, anthropicDocument, video]) {
      const worst = worstCase(endpoint({ prompt: "0.000001" }), body);
      expect(worst.promptTokens).toBe(8000);
      expect(worst.completionTokens).toBe(100);
    }
    // A request's own tool named "file" is not a document.
    const tool = { messages: hello.messages, tools: [{ type: "function", function: { name: "file" } }] };
    expect(promptTokenBound(tool).unsized).toBe(false);
  });

  it("takes the request's max tokens, capped by the endpoint, else the endpoint's, else the whole context", () => {
    expect(worstCase(endpoint({}), { ...hello, max_tokens: 50 }).completionTokens).toBe(50);
    // The explicit limit first, as every adapter sends it, whichever of the two is larger.
    expect(worstCase(endpoint({}), { ...hello, max_completion_tokens: 70, max_tokens: 50 }).completionTokens).toBe(70);
    expect(worstCase(endpoint({}), { ...hello, max_completion_tokens: 5, max_tokens: 2000 }).completionTokens).toBe(5);
    expect(worstCase(endpoint({}), { ...hello, max_completion_tokens: null, max_tokens: 50 }).completionTokens).toBe(50);
    expect(worstCase(endpoint({}, { max_completion_tokens: 40 }), { ...hello, max_tokens: 50 }).completionTokens).toBe(40);
    expect(worstCase(endpoint({}, { max_completion_tokens: 40 }), hello).completionTokens).toBe(40);
    // The prompt's bound is the most tokens it may have, not the fewest: the context it leaves may be all of it.
    expect(worstCase(endpoint({}), hello).completionTokens).toBe(8000);
  });

  it("prices every token at its dearest rate, plus the request price", () => {
    const worst = worstCase(endpoint({ prompt: "0.000001", input_cache_write: "0.00000125", completion: "0.000002", internal_reasoning: "0.000003", request: "0.01" }), { ...hello, max_tokens: 100 });
    expect(picoToDecimal(worst.amount)).toBe(picoToDecimal(BigInt(worst.promptTokens) * 1_250_000n + 100n * 3_000_000n + 10_000_000_000n));
  });

  it("holds a prompt whose bound is above the long-context threshold at the long-context prices", () => {
    const body = { messages: [{ role: "user", content: "x".repeat(2000) }], max_tokens: 100 };
    const bytes = BigInt(promptTokenBound(body).bytes);
    const long_context = (above_prompt_tokens: number) => ({ above_prompt_tokens, pricing: { prompt: "0.000002", completion: "0.000004" } });
    const standard = { prompt: "0.000001", completion: "0.000002" };
    // The bound is above 1,000 tokens: the prompt may be counted above it and charged the dearer prices.
    expect(worstCase(endpoint(standard, { long_context: long_context(1000) }), body).amount).toBe(bytes * 2_000_000n + 100n * 4_000_000n);
    // At or below the threshold no tokenizer can count it above: the standard prices suffice.
    expect(worstCase(endpoint(standard, { long_context: long_context(Number(bytes)) }), body).amount).toBe(bytes * 1_000_000n + 100n * 2_000_000n);
  });

  it("estimates the prompt's tokens at four bytes of its bound each", () => {
    const body = { messages: [{ role: "user", content: "x".repeat(4000) }] };
    expect(estimatedPromptTokens(body)).toBe(Math.ceil(promptTokenBound(body).bytes / 4));
    expect(estimatedPromptTokens(body)).toBeGreaterThanOrEqual(1000);
    expect(estimatedPromptTokens(body)).toBeLessThan(1020);
  });

  it("holds every choice the request asks for (n)", () => {
    const one = worstCase(endpoint({ completion: "0.00001" }), { ...hello, max_tokens: 100 });
    const four = worstCase(endpoint({ completion: "0.00001" }), { ...hello, max_tokens: 100, n: 4 });
    expect(four.amount - four.fixed).toBe(4n * (one.amount - one.fixed));
    expect(affordableTokens(four, 2_000_000_000n)).toBe(50); // $0.002 pays 200 tokens, 50 a choice
  });

  it("holds each choice n asks for (the contract refuses n that is not a whole number from 1)", () => {
    const choices = (n: unknown) => worstCase(endpoint({ completion: "0.00001" }), { ...hello, max_tokens: 100, n }).choices;
    expect(choices(3)).toBe(3);
    for (const one of [undefined, null, 1]) expect(choices(one), String(one)).toBe(1);
  });

  it("holds one choice on an endpoint whose API answers with one whatever n asks", () => {
    const claude = worstCase(endpoint({ completion: "0.00001" }, { adapter: "anthropic" }), { ...hello, max_tokens: 100, n: 3 });
    expect(claude.choices).toBe(1);
    expect(worstCase(endpoint({ completion: "0.00001" }, { adapter: "google" }), { ...hello, max_tokens: 100, n: 3 }).choices).toBe(3);
  });

  it("says the completion tokens what is left pays for", () => {
    const worst = worstCase(endpoint({ completion: "0.00001" }), { ...hello, max_tokens: 1000 });
    expect(affordableTokens(worst, 1_000_000_000n)).toBe(100); // $0.001 at $0.00001 a token
    expect(affordableTokens(worst, 10n ** 12n)).toBe(1000); // never more than was asked for
    expect(affordableTokens(worstCase(endpoint({ request: "0.01" }), hello), 5_000_000_000n)).toBe(0);
  });
});
