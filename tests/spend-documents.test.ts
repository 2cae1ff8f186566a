import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * A document's tokens are known only to the provider (a PDF by URL or file id is a few bytes in the request,
 * and even inline its pages cost far more than its bytes say). Its request is held at the model's context,
 * so a provider that reads 150,000 tokens from it is charged as reported and a key cannot spend past its
 * limit through one.
 */
let gw: TestGateway;
let stopUpstream: () => Promise<void>;
const inputTokens = 150_000;
const reportedUsd = inputTokens * 0.000003 + 5 * 0.000015;

beforeAll(async () => {
  const claude = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const usage = { input_tokens: inputTokens, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      const message = { id: "msg_1", type: "message", role: "assistant", model: "c", content: [{ type: "text", text: "A summary." }], stop_reason: "end_turn", stop_sequence: null, usage };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
    });
  });
  const upstream = await listenLocal(claude);
  stopUpstream = upstream.stop;
  const pricing = { prompt: "0.000003", completion: "0.000015" };
  const catalog = {
    providers: [{ slug: "claude", name: "Claude", adapter: "anthropic", base_url: upstream.baseUrl, api_key_env: "CLAUDE_KEY" }],
    models: [{ id: "anthropic/reader", name: "Reader", context_length: 200_000, input_modalities: ["text", "image", "file"], endpoints: [{ provider: "claude", upstream_model: "c", pricing, max_completion_tokens: 64_000 }] }],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "k" });
});
afterAll(async () => {
  await gw?.stop();
  await stopUpstream?.();
});

const newKey = async (limit?: number) => String((await gw.call("POST", "/keys", { body: { name: "documents", ...(limit === undefined ? {} : { limit }) } })).body.key);
const generation = async (id: string, key: string) => {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
  return (await gw.call("GET", `/generation?id=${id}`, { key })).body.data as Record<string, number>;
};

describe("documents the gateway cannot size", () => {
  it.each([
    ["a PDF by URL on /messages", "/messages", { type: "document", source: { type: "url", url: "https://example.com/report.pdf" } }],
    ["a PDF by file id on /messages", "/messages", { type: "document", source: { type: "file", file_id: "file_011" } }],
    ["a file part on /chat/completions", "/chat/completions", { type: "file", file: { filename: "report.pdf", file_data: "https://example.com/report.pdf" } }],
  ])("charges %s what the provider reported", async (_, path, part) => {
    const key = await newKey();
    const res = await gw.call("POST", path, { key, body: { model: "anthropic/reader", max_tokens: 100, messages: [{ role: "user", content: [part, { type: "text", text: "Summarise." }] }] } });
    expect(res.status).toBe(200);
    const record = await generation(res.headers.get("x-generation-id")!, key);
    expect(record.total_cost).toBeCloseTo(reportedUsd, 9);
  });

  it("refuses a key whose limit cannot cover what the document may cost, and serves text within it", async () => {
    const key = await newKey(0.1);
    const document = { type: "document", source: { type: "url", url: "https://example.com/report.pdf" } };
    const refused = await gw.call("POST", "/messages", { key, body: { model: "anthropic/reader", max_tokens: 100, messages: [{ role: "user", content: [document, { type: "text", text: "Summarise." }] }] } });
    expect(refused.status).toBe(402);
    const text = await gw.call("POST", "/messages", { key, body: { model: "anthropic/reader", max_tokens: 100, messages: [{ role: "user", content: "Summarise nothing." }] } });
    expect(text.status).toBe(200);
  });
});
