import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { silentLogger } from "@switchyard/runtime";
import { loadStandaloneConfig, startStandalone } from "@switchyard/standalone";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { testObjectStoreEnv } from "./support/object-store.js";
import { spendCatalog } from "./support/spend-fixture.js";
import {
  changedLimitBindsNextRequest,
  gatewayDriver,
  guardrailBudgetUnderConcurrency,
  keyLimitUnderConcurrency,
  limitCountsRequestsInFlight,
  spendHelpers,
  type SpendDriver,
} from "./support/spend-scenarios.js";

/** Holds and the ledger, through the router: limits and budgets hold under concurrency, and spend is exact. */
let gw: TestGateway;
let alpha: FakeProvider;
let driver: SpendDriver;
let h: ReturnType<typeof spendHelpers>;
let env: Record<string, string>;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  env = await catalogEnv(spendCatalog(alpha.baseUrl));
  gw = await startTestGateway(env);
  driver = gatewayDriver(gw, alpha);
  h = spendHelpers(driver);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

const messages = [{ role: "user", content: "Say hello" }];

describe("key limits", () => {
  it("lets at most the remaining budget's worth of 50 concurrent requests reach a provider, then says the limit is used up", () =>
    keyLimitUnderConcurrency(driver));

  it("answers 402 with the completion tokens the rest can pay for", async () => {
    const { key } = await h.newKey({ limit: 0.001 });
    const res = await h.chat(key, "spend/per-token", { max_tokens: 1000 });
    expect(res.status).toBe(402);
    // $0.001 at $0.00001 per completion token (the prompt is free): 100 tokens.
    expect(res.body.error?.message).toContain("You requested up to 1000 tokens, but can only afford 100.");
    expect((res.body.error as { metadata?: unknown }).metadata).toMatchObject({ limited_by: "key", requested_tokens: 1000, affordable_tokens: 100 });
    expect((await h.chat(key, "spend/per-token", { max_tokens: 100 })).status).toBe(200);
  });

  it("applies a changed limit to the very next request", () => changedLimitBindsNextRequest(driver));

  it("counts a request in flight against a limit set while it waits", () => limitCountsRequestsInFlight(driver, gw.apiUrl));

  it("releases the hold of a request whose provider failed before its first byte", async () => {
    const { key, hash } = await h.newKey({ limit: 0.01 });
    const failed = await h.chat(key, "spend/failing");
    expect(failed.status).toBe(502);
    // Only one worst case fits the limit: had the failed request kept its hold, this one would get 402.
    expect((await h.chat(key, "spend/cent")).status).toBe(200);
    await h.usageReaches(hash, 0.01);
  });
});

/** Runs SQL on the gateway's own database: the faults below are made there. */
async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: gw.databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe("guardrail budgets", () => {
  it("gives each key of a guardrail its own budget under 50 concurrent requests", () => guardrailBudgetUnderConcurrency(driver));

  it.skipIf(!process.env.DATABASE_URL)("refuses a guardrail change that identity could not record, and leaves the guardrail as it was", async () => {
    const created = await gw.call("POST", "/guardrails", { body: { name: "a dollar", limit_usd: 1, reset_interval: "daily" } });
    expect(created.status).toBe(201);
    const id = String(created.body.data?.id);
    await sql(`CREATE FUNCTION identity.refuse_budgets() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
      CREATE TRIGGER refuse_budgets BEFORE INSERT OR UPDATE OR DELETE ON identity.guardrail_budgets FOR EACH ROW EXECUTE FUNCTION identity.refuse_budgets()`);
    try {
      const changed = await gw.call("PATCH", `/guardrails/${id}`, { body: { limit_usd: 0.001 } });
      expect(changed.status).toBe(503);
      expect((await gw.call("DELETE", `/guardrails/${id}`)).status).toBe(503);
    } finally {
      await sql(`DROP TRIGGER refuse_budgets ON identity.guardrail_budgets; DROP FUNCTION identity.refuse_budgets()`);
    }
    expect((await gw.call("GET", `/guardrails/${id}`)).body.data).toMatchObject({ limit_usd: 1 });
  });

  it.skipIf(!process.env.DATABASE_URL)("writes to identity, when catalog starts, the budgets it lacks (an upgrade from a version without them)", async () => {
    const created = await gw.call("POST", "/guardrails", { body: { name: "half a cent", limit_usd: 0.005, reset_interval: "daily" } });
    const id = String(created.body.data?.id);
    const { key, hash } = await h.newKey();
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
    expect((await h.chat(key, "spend/cent")).status).toBe(402);
    await sql(`DELETE FROM identity.guardrail_budgets`);
    expect((await h.chat(key, "spend/cent")).status).toBe(200);

    // A second gateway process on the same database: its catalog fills identity in as it starts.
    const dataDir = await mkdtemp(join(tmpdir(), "switchyard-test-"));
    const config = loadStandaloneConfig({
      ...env,
      ...testObjectStoreEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_BOOTSTRAP_KEY: bootstrapKey,
      LOG_LEVEL: "silent",
      DATABASE_URL: gw.databaseUrl!,
    });
    const second = await startStandalone(config, silentLogger());
    try {
      // The cent spent while it had no budget used the half-cent budget up: a 403 until it resets.
      await eventually(async () => (await h.chat(key, "spend/cent")).status === 403, 5000);
    } finally {
      await second.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("what is charged", () => {
  it("charges a streamed and a buffered run of the same completion the same, and the ledger agrees with the generation", async () => {
    const { key, hash } = await h.newKey();
    const buffered = await h.chat(key, "spend/tokens");
    const streamed = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "spend/tokens", messages, stream: true }),
    });
    await streamed.text();
    const ids = [String(buffered.body.id), String(streamed.headers.get("x-generation-id"))];
    const costs = await Promise.all(ids.map(async (id) => Number((await gw.call("GET", `/generation?id=${id}`, { key })).body.data?.total_cost)));
    expect(costs[0]).toBeGreaterThan(0);
    expect(costs[1]).toBe(costs[0]);
    await h.usageReaches(hash, Number((costs[0]! * 2).toFixed(12)));
  });

  it("charges a provider that sends no usage a non-zero estimate", async () => {
    const { key, hash } = await h.newKey();
    const res = await h.chat(key, "spend/no-usage");
    expect(res.status).toBe(200);
    await eventually(async () => ((await h.keyRecord(hash)).usage ?? 0) > 0, 5000);
  });
});
