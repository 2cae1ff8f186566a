import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let provider: FakeProvider;

beforeAll(async () => {
  provider = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: provider.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [{ id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), ALPHA_KEY: "alpha-secret" });
});
afterAll(async () => {
  await gw?.stop();
  await provider?.stop();
});

const keyIn = async (workspaceId: string | undefined, name: string) =>
  String((await gw.call("POST", "/keys", { body: { name, ...(workspaceId ? { workspace_id: workspaceId } : {}) } })).body.key);

const chat = async (key: string) => {
  const res = await gw.call("POST", "/chat/completions", { key, body: { model: "chat/ok", messages: [{ role: "user", content: "hi" }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.headers.get("x-generation-id")!;
};

describe("GET /generation is scoped to the caller's workspace", () => {
  it("answers 404 to another workspace's key, and the record to its own workspace and to a management key", async () => {
    const research = (await gw.call("POST", "/workspaces", { body: { name: "Research", slug: "research-gen" } })).body.data!;
    const researchKey = await keyIn(String(research.id), "research");
    const defaultKey = await keyIn(undefined, "default");

    const id = await chat(researchKey);
    // Read twice: once while the record may still wait for its batch, once after it is surely written.
    for (let round = 0; round < 2; round++) {
      const own = await gw.call("GET", `/generation?id=${id}`, { key: researchKey });
      expect(own.status).toBe(200);
      expect(own.body.data?.workspace_id).toBe(research.id);
      const other = await gw.call("GET", `/generation?id=${id}`, { key: defaultKey });
      expect(other.status).toBe(404);
      expect(other.body.error).toEqual({ code: 404, message: "Generation not found" });
      expect((await gw.call("GET", `/generation?id=${id}`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  });
});
