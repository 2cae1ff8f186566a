import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let provider: FakeProvider;
let alice: { key: string; hash: string };
let bob: { key: string; hash: string };
let research: string;
/** Generation ids in the order they were made. */
const made: string[] = [];
let refused: { status: number; id: string };

const pricing = { prompt: "0.000001", completion: "0.000002" };

beforeAll(async () => {
  provider = await startFakeProvider("alpha");
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: provider.baseUrl, api_key_env: "ALPHA_KEY" }],
    models: [
      { id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
      { id: "chat/broken", name: "broken", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "fail-500", pricing }] },
      { id: "chat/cut", name: "cut", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "cut", pricing }] },
    ],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), ALPHA_KEY: "alpha-secret" });
  research = String((await gw.call("POST", "/workspaces", { body: { name: "Research", slug: "research-activity" } })).body.data!.id);
  const keyIn = async (name: string, workspaceId?: string) => {
    const res = await gw.call("POST", "/keys", { body: { name, ...(workspaceId ? { workspace_id: workspaceId } : {}) } });
    return { key: String(res.body.key), hash: String(res.body.data!.hash) };
  };
  alice = await keyIn("alice");
  bob = await keyIn("bob", research);
  const chat = async (key: string, model: string) => {
    // Streamed, so that a stream cut mid-way is a generation that failed.
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    await res.text();
    return { status: res.status, id: res.headers.get("x-generation-id")! };
  };
  for (const [key, model] of [[alice.key, "chat/ok"], [alice.key, "chat/ok"], [bob.key, "chat/ok"], [alice.key, "chat/cut"], [alice.key, "chat/ok"]] as const) {
    made.push((await chat(key, model)).id);
  }
  // No endpoint accepted it: no generation, nothing charged, nothing listed.
  refused = await chat(alice.key, "chat/broken");
  expect(refused.status).toBe(502);
  // The list reads the ledger, which the generations' events fill a moment later.
  await eventually(async () => (await gw.call("GET", "/generations")).body.data?.length === made.length, 10_000);
});
afterAll(async () => {
  await gw?.stop();
  await provider?.stop();
});

const ids = (res: { body: { data?: Array<Record<string, unknown>> } }) => (res.body.data ?? []).map((g) => g.id);

describe("GET /generations", () => {
  it("lists the organization's generations newest first, each as its record says", async () => {
    const res = await gw.call("GET", "/generations");
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([...made].reverse());
    expect(ids(res)).not.toContain(refused.id);
    expect(res.body.next_cursor).toBeNull();
    const first = res.body.data!.find((g) => g.id === made[0])!;
    const record = (await gw.call("GET", `/generation?id=${made[0]}`)).body.data!;
    expect(first).toMatchObject({
      operation: "chat",
      model: "chat/ok",
      provider: "alpha",
      upstream_model: "ok",
      status: "completed",
      api_key_hash: alice.hash,
      prompt_tokens: record.tokens_prompt,
      completion_tokens: record.tokens_completion,
      cost: record.usage,
      is_byok: false,
    });
    expect(first.cost).toBeGreaterThan(0);
    expect(Date.parse(String(first.created_at))).toBeGreaterThan(Date.now() - 120_000);
  });

  it("filters by key, workspace, model, provider, status and time", async () => {
    const list = (query: string) => gw.call("GET", `/generations?${query}`).then(ids);
    expect(await list(`api_key_hash=${bob.hash}`)).toEqual([made[2]]);
    expect(await list(`workspace_id=${research}`)).toEqual([made[2]]);
    expect(await list("model=chat/cut")).toEqual([made[3]]);
    expect(await list("status=error")).toEqual([made[3]]);
    expect(await list("provider=alpha&status=completed")).toHaveLength(4);
    expect(await list(`to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).toEqual([]);
    expect(await list(`from=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&operation=chat`)).toHaveLength(made.length);
  });

  it("pages by cursor without repeating or skipping a generation", async () => {
    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<TestGateway["call"]>> = await gw.call("GET", `/generations?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.next_cursor as string | null;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());
  });

  it("never lists another organization's generations, and takes management keys only", async () => {
    const other = await gw.standalone.identity.createOrganization("Elsewhere");
    const theirs = await gw.call("GET", "/generations", { key: other.managementKey });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    const byInference = await gw.call("GET", "/generations", { key: alice.key });
    expect(byInference.status).toBe(403);
  });

  it("refuses what it cannot honour with a clear 400", async () => {
    const refused = async (query: string, message: RegExp) => {
      const res = await gw.call("GET", `/generations?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error?.message).toMatch(message);
    };
    await refused("limit=0", /limit/);
    await refused("limit=201", /limit/);
    await refused("cursor=bm90LWEtY3Vyc29y", /cursor: not a cursor this list gave/);
    await refused("status=lost", /status/);
    await refused("sort=oldest", /sort/);
    await refused("api_key_hash=short", /api_key_hash: must be a key hash/);
    await refused("from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", /from must be before to/);
  });
});

describe("GET /activity/daily", () => {
  it("sums today's generations as their records charged them, failures counted as errors", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const records = await Promise.all(made.map(async (id) => (await gw.call("GET", `/generation?id=${id}`)).body.data!));
    const charged = records.reduce((sum, r) => sum + Number(r.usage), 0);
    const res = await gw.call("GET", `/activity/daily?from=${today}&to=${today}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ date: today, group: null, requests: made.length, errors: 1 })]);
    expect(res.body.data![0]!.usage).toBeCloseTo(charged, 12);
    expect(res.body.data![0]!.p50_generation_time_ms).toEqual(expect.any(Number));
    const byKey = await gw.call("GET", `/activity/daily?from=${today}&to=${today}&group_by=key`);
    expect(Object.fromEntries((byKey.body.data ?? []).map((r) => [r.group, r.requests]))).toEqual({ [alice.hash]: 4, [bob.hash]: 1 });
  });

  it("refuses a backwards or too long range", async () => {
    expect((await gw.call("GET", "/activity/daily?from=2026-02-02&to=2026-02-01")).body.error?.message).toMatch(/from must not be after to/);
    expect((await gw.call("GET", "/activity/daily?from=2024-01-01&to=2026-01-01")).body.error?.message).toMatch(/at most 366 days/);
    expect((await gw.call("GET", "/activity/daily?from=2026-02-30&to=2026-03-01")).body.error?.message).toMatch(/real calendar day/);
  });
});

describe("GET /activity", () => {
  it("answers @openrouter/sdk's activity method, which validates it, and leaves today out", async () => {
    const admin = new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl });
    const all = await admin.analytics.getUserActivity({});
    expect(all.data).toEqual([]);
    const filtered = await admin.analytics.getUserActivity({ apiKeyHash: alice.hash, groupBy: "workspace" });
    expect(filtered.data).toEqual([]);
  });

  it("refuses a user filter it has no users for, and a day outside the window", async () => {
    const byUser = await gw.call("GET", "/activity?user_id=user_1");
    expect(byUser.status).toBe(400);
    expect(byUser.body.error?.message).toMatch(/user_id: Switchyard has no organization members/);
    const today = new Date().toISOString().slice(0, 10);
    const todays = await gw.call("GET", `/activity?date=${today}`);
    expect(todays.status).toBe(400);
    expect(todays.body.error?.message).toMatch(/must be one of the last 30 completed UTC days/);
  });
});
