import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestGateway } from "./support/gateway.js";
import { speak, startMediaFixture, type MediaFixture } from "./support/media-fixture.js";
import { startRetrievalFixture, type RetrievalFixture } from "./support/retrieval-fixture.js";

/**
 * `provider.options` are text a provider receives beside the prompt (Whisper's prompt, a voice's
 * instructions, a Gemini document's title): the guardrails' filters read their string values, nested ones
 * included, as they read the prompt. Redacted where the provider gets them, 403 with no provider call under
 * `block`.
 */
let media: MediaFixture;
let retrieval: RetrievalFixture;
let wav: Buffer;

beforeAll(async () => {
  [media, retrieval] = await Promise.all([startMediaFixture(), startRetrievalFixture()]);
  wav = await speak("Hello.");
});
afterAll(async () => {
  await media?.stop();
  await retrieval?.stop();
});

const email = "ada.lovelace@example.org";

/** A new inference key on `gw` under one guardrail whose `email` builtin takes `action`. */
async function keyFor(gw: TestGateway, action: "redact" | "block"): Promise<{ key: string; id: string }> {
  const created = await gw.call("POST", "/keys", { body: { name: `email ${action}` } });
  const guardrail = await gw.call("POST", "/guardrails", { body: { name: `email ${action}`, content_filter_builtins: [{ slug: "email", action }] } });
  const id = String(guardrail.body.data?.id);
  expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [String(created.body.data?.hash)] } })).status).toBe(200);
  return { key: String(created.body.key), id };
}

/** Posts JSON; the whole answer is read, so the upstream call is over when this returns. */
async function post(gw: TestGateway, path: string, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString("latin1") };
}

/** Both actions for one route: what `seen()` shows the provider got under redact, and 403 with no call under block. */
async function checkRoute(gw: TestGateway, path: string, body: Record<string, unknown>, calls: () => number, seen: () => string) {
  const redacting = await keyFor(gw, "redact");
  const ok = await post(gw, path, redacting.key, body);
  expect(ok.status, ok.text).toBe(200);
  expect(seen()).not.toContain(email);
  expect(seen()).toContain("[EMAIL]");

  const blocking = await keyFor(gw, "block");
  const before = calls();
  const refused = await post(gw, path, blocking.key, body);
  expect(refused.status, refused.text).toBe(403);
  expect(refused.text).toContain(blocking.id);
  expect(refused.text).not.toContain(email);
  expect(calls()).toBe(before);
}

describe("provider.options under the guardrails' filters", () => {
  it("filters a transcription's options, which the Whisper form carries as fields", async () => {
    const body = { model: "openai/whisper-1", input_audio: { data: wav.toString("base64"), format: "wav" }, provider: { options: { whisper: { prompt: `names ${email}` } } } };
    await checkRoute(media.gw, "/audio/transcriptions", body, () => media.fake.requests.length, () => String(media.fake.requests.at(-1)!.fields.prompt));
  });

  it("filters speech options, nested values included", async () => {
    const body = { model: "openai/tts-1", input: "Hello.", voice: "alloy", provider: { options: { voices: { instructions: `voice of ${email}`, extra: { notes: [`for ${email}`] } } } } };
    await checkRoute(media.gw, "/audio/speech", body, () => media.speech.requests.length, () => JSON.stringify(media.speech.requests.at(-1)!.body));
    expect(media.speech.requests.at(-1)!.body).toMatchObject({ instructions: "voice of [EMAIL]", extra: { notes: ["for [EMAIL]"] } });
  });

  it("filters image generation options", async () => {
    const body = { model: "openai/gpt-image-1", prompt: "a lighthouse", provider: { options: { pixels: { style_notes: `for ${email}` } } } };
    await checkRoute(media.gw, "/images", body, () => media.fake.requests.length, () => JSON.stringify(media.fake.requests.at(-1)!.fields));
  });

  it("filters Gemini embedding options, which go into every request Gemini gets", async () => {
    const body = { model: "emb/gemini", input: "The grass is green.", provider: { options: { gem: { title: `doc ${email}` } } } };
    await checkRoute(retrieval.gw, "/embeddings", body, () => retrieval.fake.requests.length, () => JSON.stringify(retrieval.fake.requests.at(-1)!.body));
  });

  it("filters rerank options", async () => {
    const body = { model: "rr/cohere", query: "green", documents: ["The grass is green."], provider: { options: { co: { note: `from ${email}` } } } };
    await checkRoute(retrieval.gw, "/rerank", body, () => retrieval.fake.requests.length, () => JSON.stringify(retrieval.fake.requests.at(-1)!.body));
  });
});
