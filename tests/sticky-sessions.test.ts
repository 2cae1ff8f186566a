import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Sticky routing through the router: a session's requests go to the endpoint that served its last one, as
 * OpenRouter keeps a conversation where its prompt cache is, whichever endpoint the seeded default order
 * would draw. s/m has two endpoints at the same price, alpha and beta.
 */
let gw: TestGateway;
const fakes: FakeProvider[] = [];
let key: string;

beforeAll(async () => {
  for (const name of ["alpha", "beta"]) fakes.push(await startFakeProvider(name, () => "ok"));
  const endpoint = (provider: string) => ({ provider, upstream_model: "ok", pricing: { prompt: "0.000001", completion: "0.000001" } });
  const catalog = {
    providers: fakes.map((fake, i) => ({ slug: ["alpha", "beta"][i]!, name: ["Alpha", "Beta"][i]!, adapter: "openai-compatible", base_url: fake.baseUrl, requires_api_key: false })),
    models: [{ id: "s/m", name: "Sticky", context_length: 8000, endpoints: [endpoint("alpha"), endpoint("beta")] }],
  };
  gw = await startTestGateway(await catalogEnv(catalog));
  key = String((await gw.call("POST", "/keys", { body: { name: "sticky sessions" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  for (const fake of fakes) await fake.stop();
});

/** The provider that served one turn of a session. */
async function turn(session: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await gw.call("POST", "/chat/completions", { key, body: { model: "s/m", messages: [{ role: "user", content: "Hi" }], session_id: session, ...body } });
  expect(res.status).toBe(200);
  return String((await gw.call("GET", `/generation?id=${String(res.body.id)}`, { key })).body.data?.provider_name);
}

describe("session_id", () => {
  it("keeps a session on the endpoint that served its last request, whatever the seeded order would draw", async () => {
    const sessions = Array.from({ length: 10 }, (_, i) => `conversation-${i}-${Date.now()}`);
    // Each first turn is served by beta (as after a fallback); the seeded order would draw alpha for about half.
    for (const session of sessions) expect(await turn(session, { provider: { order: ["beta"], allow_fallbacks: false } })).toBe("beta");
    const next = await Promise.all(sessions.map((session) => turn(session)));
    expect(next).toEqual(sessions.map(() => "beta"));
  });

  it("leaves a remembered endpoint the caller excludes", async () => {
    const session = `excluded-${Date.now()}`;
    expect(await turn(session, { provider: { order: ["beta"], allow_fallbacks: false } })).toBe("beta");
    expect(await turn(session, { provider: { ignore: ["beta"] } })).toBe("alpha");
  });
});
