import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/** The console's Keys page: the figures each row shows, the create form's checks, and recovery after an outage. */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
let workspace: string;

beforeAll(async () => {
  if (browserMissing) return;
  fixture = await startConsoleFixture(
    (url) => ({
      // No operator key for own: only a workspace's own key serves it.
      providers: [{ slug: "own", name: "Own", adapter: "openai-compatible", base_url: url, api_key_env: "OWN_KEY" }],
      // 12 prompt and 5 completion tokens, as the fake provider reports them, come to $0.00027.
      models: [{ id: "chat/own", name: "Own", context_length: 8000, endpoints: [{ provider: "own", upstream_model: "ok", pricing: { prompt: "0.00001", completion: "0.00003" } }] }],
    }),
    { SWITCHYARD_ENCRYPTION_KEY: "console-keys-encryption-secret-0123456789" },
  );
  ({ gw, tab } = fixture);
  workspace = String((await gw.call("POST", "/workspaces", { body: { name: "Own keys", slug: "own-keys" } })).body.data!.id);
  expect((await gw.call("PUT", `/workspaces/${workspace}/provider-keys/own`, { body: { key: "sk-own-1234" } })).status).toBe(200);
}, 120_000);
afterAll(() => fixture?.stop());

async function newKey(body: Record<string, unknown>): Promise<{ key: string; hash: string }> {
  const res = await gw.call("POST", "/keys", { body });
  expect(res.status).toBe(201);
  return { key: String(res.body.key), hash: String(res.body.data!.hash) };
}

const row = (name: string) => tab.page.getByRole("table", { name: "Keys" }).locator("tr", { has: tab.page.getByRole("button", { name: `Edit ${name}`, exact: true }) });
/** A cell of a key's row by its column's place (5 is Usage, 6 Limit, 8 Guardrails). */
const cell = (name: string, column: number) => row(name).locator(`td:nth-child(${column})`);
const text = async (name: string, column: number) => ((await cell(name, column).textContent()) ?? "").replace(/\s+/g, " ").trim();

describe.skipIf(browserMissing)("console Keys", { timeout: 90_000 }, () => {
  it("shows a limit below a millionth of a dollar with its digits", async () => {
    await newKey({ name: "tiny limit", limit: 0.0000001 });
    await tab.open("keys");
    await row("tiny limit").waitFor();
    expect(await text("tiny limit", 6)).toContain("$0.0000001 left");
  });

  it("shows a key's BYOK usage beside what it was charged, and that its limit counts it", async () => {
    const { key } = await newKey({ name: "own usage", workspace_id: workspace, limit: 1, include_byok_in_limit: true });
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/own", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await eventually(async () => Number((await gw.call("GET", "/keys?include_disabled=true")).body.data!.find((k) => k.name === "own usage")!.byok_usage) > 0, 10_000);
    await tab.open("keys");
    await row("own usage").waitFor();
    const usage = await text("own usage", 5);
    expect(usage).toContain("Today$0.00+ $0.00027 BYOK");
    expect(usage).toContain("Total$0.00+ $0.00027 BYOK");
    const limit = await text("own usage", 6);
    expect(limit).toContain("$0.99973 left");
    expect(limit).toContain("BYOK counts toward it");
  });

  it("refuses a spending limit written in hexadecimal, saying what it takes", async () => {
    await tab.open("keys");
    await tab.page.getByRole("button", { name: "Create key" }).click();
    const dialog = tab.page.getByRole("dialog", { name: "Create key" });
    await dialog.getByLabel("Name").fill("hex limit");
    await dialog.getByLabel("Spending limit (USD)").fill("0x10");
    await dialog.getByRole("button", { name: "Create" }).click();
    // Refused in the form, or (wrongly) created with a limit of $16.
    await dialog.getByRole("alert").or(dialog.getByText("Copy this secret now: it is not shown again.")).waitFor();
    expect((await gw.call("GET", "/keys?include_disabled=true")).body.data!.filter((k) => k.name === "hex limit").map((k) => k.limit)).toEqual([]);
    expect(await dialog.getByRole("alert").textContent()).toBe("Spending limit must be a plain decimal number of dollars, such as 25 or 0.50.");
    await dialog.getByRole("button", { name: "Close" }).click();
  });

  it("loads guardrail assignments again with the keys when Try again is pressed after an outage", async () => {
    const assigned = await newKey({ name: "guarded" });
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "Own only", allowed_providers: ["own"] } });
    await gw.call("POST", `/guardrails/${String(guardrail.body.data!.id)}/assignments/keys`, { body: { key_hashes: [assigned.hash] } });
    await tab.page.route(/\/api\/v1\/(keys|guardrails)/, (route) => route.abort());
    await tab.open("keys");
    await tab.page.getByText("Keys could not be loaded: The gateway could not be reached.").waitFor();
    await tab.page.unrouteAll();
    await tab.page.getByRole("button", { name: "Try again" }).first().click();
    await row("guarded").waitFor();
    await expect.poll(() => text("guarded", 8)).toBe("Own only");
    expect(await tab.page.getByRole("alert").count()).toBe(0);
  });

  it("shows and marks a key created when more than a page of keys exists", async () => {
    for (let i = 0; i < 100; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => newKey({ name: `filler ${i + j}` })));
    await tab.open("keys");
    await tab.page.getByText(/^Showing 100 of \d+ keys/).waitFor();
    await tab.page.getByRole("button", { name: "Create key" }).click();
    const dialog = tab.page.getByRole("dialog", { name: "Create key" });
    await dialog.getByLabel("Name").fill("the newest");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByRole("button", { name: "Done" }).click();
    await row("the newest").waitFor({ timeout: 10_000 });
    expect(await row("the newest").getAttribute("class")).toContain("fresh");
    // It stays a row of its own that follows what is done to it.
    await tab.page.getByRole("button", { name: "Disable the newest" }).click();
    await tab.page.getByRole("button", { name: "Enable the newest" }).waitFor();
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
