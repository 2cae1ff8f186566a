import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * `client_metadata` on `/responses`, as Codex sends its session and turn on every request: OpenAI's Responses
 * endpoints get it as sent; Chat Completions endpoints have no place for it and get the request without it.
 */

let gw: TestGateway;
let compat: FakeProvider;
let responses: FakeResponses;
let key: string;

beforeAll(async () => {
  compat = await startFakeProvider("compat");
  responses = await startFakeResponses();
  const provider = (slug: string, adapter: string, baseUrl: string) => ({ slug, name: slug, adapter, base_url: baseUrl, requires_api_key: false });
  const pricing = { prompt: "0.000002", completion: "0.000008" };
  const model = (id: string, slug: string, upstream: string) => ({ id, name: id, context_length: 200000, endpoints: [{ provider: slug, upstream_model: upstream, pricing, max_completion_tokens: 8192 }] });
  const catalog = {
    providers: [provider("compat", "openai-compatible", compat.baseUrl), provider("openai", "openai", responses.baseUrl)],
    models: [model("openai/native", "openai", "text"), model("vendor/compat", "compat", "ok")],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "client-metadata" } })).body.key);
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([compat?.stop(), responses?.stop()]);
});

const labels = { session_id: "019a-session", turn_id: "019a-turn", "x-codex-turn-metadata": JSON.stringify({ sandbox: "seccomp", request_kind: "turn" }) };

describe("client_metadata", () => {
  it("reaches OpenAI's Responses endpoints as sent", async () => {
    const res = await gw.call("POST", "/responses", { key, body: { model: "openai/native", input: "Say hello", client_metadata: labels } });
    expect(res.status).toBe(200);
    expect(responses.requests.at(-1)!.body.client_metadata).toEqual(labels);
  });

  it("is left out for Chat Completions endpoints", async () => {
    const res = await gw.call("POST", "/responses", { key, body: { model: "vendor/compat", input: "Say hello", client_metadata: labels } });
    expect(res.status).toBe(200);
    expect(compat.requests.at(-1)!.body).not.toHaveProperty("client_metadata");
  });

  it("is refused when it is not labels", async () => {
    const res = await gw.call("POST", "/responses", { key, body: { model: "openai/native", input: "Say hello", client_metadata: { turn: 1 } } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/client_metadata\.turn/);
  });
});
