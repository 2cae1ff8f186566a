import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * A provider's usage figure no request can have (trillions of tokens) is cut to what records keep, so the
 * generation and its charge are written, and so are the others committed in the same batch.
 */
let gw: TestGateway;
let chat: FakeChat;
const trillions = { prompt_tokens: 5e12, completion_tokens: 3e12, total_tokens: 8e12 };
/** Four choices of at most 100 tokens each. */
const fourChoices = { prompt_tokens: 10, completion_tokens: 400, total_tokens: 410 };

beforeAll(async () => {
  chat = await startFakeChat((body) =>
    body.model === "absurd" ? { content: "hi", usage: trillions } : body.model === "choices" ? { content: "ok", usage: fourChoices } : { content: "ok" },
  );
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const catalog = {
    providers: [{ slug: "open", name: "Open", adapter: "openai-compatible", base_url: chat.baseUrl, requires_api_key: false }],
    models: ["absurd", "plain", "choices"].map((id) => ({ id: `v/${id}`, name: id, context_length: 1000, endpoints: [{ provider: "open", upstream_model: id, pricing, max_completion_tokens: 100 }] })),
  };
  gw = await startTestGateway(await catalogEnv(catalog));
});
afterAll(async () => {
  await gw?.stop();
  await chat?.stop();
});

describe("usage counts beyond what records keep", () => {
  it("records the generation with its counts cut, charges at most its hold, and keeps charging the requests after it", async () => {
    const key = String((await gw.call("POST", "/keys", { body: { name: "counts", limit: 1 } })).body.key);
    const messages = [{ role: "user", content: "hello" }];
    const absurd = await gw.call("POST", "/chat/completions", { key, body: { model: "v/absurd", messages, max_tokens: 10 } });
    expect(absurd.status).toBe(200);
    const plain: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await gw.call("POST", "/chat/completions", { key, body: { model: "v/plain", messages, max_tokens: 10 } });
      plain.push((res.body.usage as { cost: number }).cost);
    }
    const generation = async () => (await gw.call("GET", `/generation?id=${String(absurd.body.id)}`, { key })).body.data as Record<string, number> | undefined;
    // The held worst case: the prompt's bytes and max_tokens, well under a cent.
    await eventually(async () => {
      const usage = Number((await gw.call("GET", "/key", { key })).body.data?.usage);
      const record = await generation();
      return record !== undefined && usage > 0 && Math.abs(usage - (record.total_cost! + plain.reduce((a, b) => a + b, 0))) < 1e-9;
    }, 10_000);
    const record = await generation();
    expect(record).toMatchObject({ tokens_prompt: 2 ** 31 - 1, tokens_completion: 2 ** 31 - 1 });
    expect(record!.total_cost).toBeGreaterThan(0);
    expect(record!.total_cost).toBeLessThan(0.01);
  });

  it("holds and charges every choice a request asks for (n)", async () => {
    const key = String((await gw.call("POST", "/keys", { body: { name: "choices" } })).body.key);
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "v/choices", messages: [{ role: "user", content: "hello" }], max_tokens: 100, n: 4 } });
    expect(res.status).toBe(200);
    expect(chat.requests.at(-1)!.n).toBe(4);
    expect((res.body.usage as { cost: number }).cost).toBeCloseTo(10 * 0.000001 + 400 * 0.000002, 12);
  });
});
