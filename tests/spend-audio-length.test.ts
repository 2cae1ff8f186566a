import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstPart, startCountingGateway, type ChatMessages, type CountingGateway } from "./support/counting-upstream.js";
import { silentWav } from "./support/media-fixture.js";

/**
 * Audio in a chat prompt is billed by its length (Gemini counts 32 tokens a second), however few bytes the
 * request spends on it. A five-minute clip is 9,600 audio tokens: its hold must cover them, so that the
 * charge is what the provider reports and a key whose limit cannot pay for them is refused before the
 * provider is called.
 */
let fx: CountingGateway;
const perSecond = 32;
const textTokens = 20;
const completionTokens = 5;
const prompt = 0.000001;
const completion = 0.000002;

/** The seconds of the first WAV clip in a chat body, read as the provider reads it. */
const clipSeconds = (body: ChatMessages): number => {
  const part = firstPart<{ input_audio?: { data: string } }>(body, "input_audio");
  return part?.input_audio ? (Buffer.from(part.input_audio.data, "base64").length - 44) / 8000 : 0;
};

const fiveMinutes = silentWav(300).toString("base64");
const tenSeconds = silentWav(10).toString("base64");
const reportedUsd = (seconds: number) => (seconds * perSecond + textTokens) * prompt + completionTokens * completion;

beforeAll(async () => {
  fx = await startCountingGateway({
    model: "audio/listener",
    inputModalities: ["text", "audio"],
    pricing: { prompt, completion },
    promptTokens: (body) => clipSeconds(body) * perSecond + textTokens,
    completionTokens,
  });
});
afterAll(async () => {
  await fx?.stop();
});

const chatBody = (data: string) => ({ model: "audio/listener", max_tokens: 100, messages: [{ role: "user", content: [{ type: "text", text: "What is said?" }, { type: "input_audio", input_audio: { data, format: "wav" } }] }] });
const responsesBody = (data: string) => ({ model: "audio/listener", max_output_tokens: 100, input: [{ role: "user", content: [{ type: "input_text", text: "What is said?" }, { type: "input_audio", input_audio: { data, format: "wav" } }] }] });

describe("audio in a chat prompt, held by its length", () => {
  it.each([
    ["/chat/completions", chatBody],
    ["/responses", responsesBody],
  ])("charges a five-minute clip on %s what the provider reports for its length", async (path, body) => {
    const key = await fx.newKey();
    const res = await fx.gw.call("POST", path, { key, body: body(fiveMinutes) });
    expect(res.status).toBe(200);
    const record = await fx.generation(res.headers.get("x-generation-id")!, key);
    expect(record.native_tokens_prompt).toBe(300 * perSecond + textTokens);
    expect(record.total_cost).toBeCloseTo(reportedUsd(300), 9);
  });

  it("refuses a key whose limit pays for 2,000 audio tokens but not a five-minute clip's, before the provider is called", async () => {
    // $0.005 covers a 2,000-token prompt and 100 completion tokens ($0.0022), not 9,600 audio tokens.
    const key = await fx.newKey(0.005);
    const before = fx.calls();
    const refused = await fx.gw.call("POST", "/chat/completions", { key, body: chatBody(fiveMinutes) });
    expect(refused.status).toBe(402);
    expect(fx.calls()).toBe(before);
    // Ten seconds are 320 tokens: within the limit.
    const served = await fx.gw.call("POST", "/chat/completions", { key, body: chatBody(tenSeconds) });
    expect(served.status).toBe(200);
    const record = await fx.generation(served.headers.get("x-generation-id")!, key);
    expect(record.total_cost).toBeCloseTo(reportedUsd(10), 9);
  });
});
