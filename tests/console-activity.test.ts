import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/**
 * The console's Activity page in Chromium against a whole gateway: what its rows and drawer say a generation
 * cost, whose key made it, and that the live list neither loses generations nor stays broken after an outage.
 */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
let worker: string;
let owner: string;

/** 12 prompt and 5 completion tokens, as the fake provider reports them, come to $0.00027 here. */
const usual = { prompt: "0.00001", completion: "0.00003" };
/** …and to $0.00000022 here. */
const tiny = { prompt: "0.00000001", completion: "0.00000002" };

beforeAll(async () => {
  if (browserMissing) return;
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" },
        // No operator key: only a workspace's own key serves it.
        { slug: "own", name: "Own", adapter: "openai-compatible", base_url: url, api_key_env: "OWN_KEY" },
      ],
      models: [
        { id: "chat/ok", name: "OK", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: usual }] },
        { id: "chat/tiny", name: "Tiny", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: tiny }] },
        { id: "chat/own", name: "Own", context_length: 8000, endpoints: [{ provider: "own", upstream_model: "ok", pricing: usual }] },
      ],
    }),
    { ALPHA_KEY: "alpha-secret", SWITCHYARD_ENCRYPTION_KEY: "console-activity-encryption-secret-0123456789" },
  );
  ({ gw, tab } = fixture);
  const workspace = String((await gw.call("POST", "/workspaces", { body: { name: "Own keys", slug: "own-keys" } })).body.data!.id);
  expect((await gw.call("PUT", `/workspaces/${workspace}/provider-keys/own`, { body: { key: "sk-own-1234" } })).status).toBe(200);
  worker = await newKey("worker");
  owner = await newKey("owner", workspace);
}, 120_000);
afterAll(() => fixture?.stop());

async function newKey(name: string, workspaceId?: string): Promise<string> {
  const res = await gw.call("POST", "/keys", { body: { name, ...(workspaceId ? { workspace_id: workspaceId } : {}) } });
  expect(res.status).toBe(201);
  return String(res.body.key);
}

async function chat(key: string, model: string): Promise<string> {
  const res = await fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get("x-generation-id")!;
}

/** `count` chats, ten at a time. */
async function chats(key: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: Math.min(10, count - i) }, () => chat(key, "chat/ok")));
}

/** Every generation id the list API has, following its cursor to the end. */
async function listedIds(): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await gw.call("GET", `/generations?limit=200${cursor ? `&cursor=${cursor}` : ""}`);
    ids.push(...res.body.data!.map((g) => String(g.id)));
    cursor = (res.body.next_cursor as string | null) ?? null;
  } while (cursor);
  return ids;
}

const listed = (id: string) => eventually(async () => (await listedIds()).includes(id), 10_000);
const details = (id: string) => tab.page.getByRole("button", { name: `Details of ${id}` });
const row = (id: string) => tab.page.locator("tr", { has: details(id) });
/** A cell of a row by its column's place (1 is the time, 6 the key, 8 the cost). */
const cell = (id: string, column: number) => row(id).locator(`td:nth-child(${column})`);
const fact = (term: string) => tab.page.getByRole("dialog").locator(`xpath=.//dt[normalize-space()='${term}']/following-sibling::dd[1]`);
const alerts = () => tab.page.getByRole("alert").allTextContents();
const shownCount = () => tab.page.getByText(/^\d+ shown$/).textContent();

describe.skipIf(browserMissing)("console Activity", { timeout: 90_000 }, () => {
  it("bills a BYOK generation at the record's $0.00 in its row and drawer alike, its provider's price marked BYOK", async () => {
    const id = await chat(owner, "chat/own");
    await listed(id);
    await tab.open("activity");
    await details(id).waitFor();
    const rowCost = (await cell(id, 8).textContent())!.trim();
    await details(id).click();
    const total = (await fact("Total cost").textContent())!.trim();
    expect(total).toBe("$0.00");
    // The row's billed figure is the drawer's, then the BYOK mark.
    expect(rowCost.slice(0, rowCost.indexOf("BYOK"))).toBe(total);
    expect(rowCost).toContain("BYOK $0.00027");
    expect(await fact("BYOK cost").textContent()).toContain("$0.00027");
    await tab.page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
  });

  it("shows a cost below a millionth of a dollar with its digits in the row and the drawer", async () => {
    const id = await chat(worker, "chat/tiny");
    await listed(id);
    await tab.open("activity");
    await details(id).waitFor();
    expect((await cell(id, 8).textContent())!.trim()).toBe("$0.00000022");
    await details(id).click();
    expect((await fact("Total cost").textContent())!.trim()).toBe("$0.00000022");
    await tab.page.getByRole("dialog").getByRole("button", { name: "Close" }).click();
  });

  it("names the key of a generation made with a key created after the page opened", async () => {
    await tab.open("activity");
    await tab.page.getByText(/^\d+ shown$/).waitFor();
    const late = await newKey("late arrival");
    const id = await chat(late, "chat/ok");
    await details(id).waitFor({ timeout: 15_000 });
    await expect.poll(async () => (await cell(id, 6).textContent())?.trim(), { timeout: 10_000 }).toBe("late arrival");
  });

  it("clears the unreachable-gateway notice once the gateway answers again, with nothing new to show", async () => {
    await tab.open("activity");
    await tab.page.getByText(/^\d+ shown$/).waitFor();
    await tab.page.route("**/api/v1/generations?**", (route) => route.abort());
    await expect.poll(alerts, { timeout: 10_000 }).toContain("The gateway could not be reached.");
    await tab.page.unrouteAll();
    await expect.poll(alerts, { timeout: 10_000 }).toEqual([]);
  });

  it("fills a list opened while the gateway was unreachable once it answers", async () => {
    const id = await chat(worker, "chat/ok");
    await listed(id);
    await tab.page.route("**/api/v1/generations?**", (route) => route.abort());
    await tab.open("activity");
    await expect.poll(alerts, { timeout: 10_000 }).toContain("The gateway could not be reached.");
    await tab.page.unrouteAll();
    await details(id).waitFor({ timeout: 15_000 });
    expect(await alerts()).toEqual([]);
  });

  it("shows every generation when more than a page of them arrives between two looks", async () => {
    await tab.open("activity");
    await tab.page.getByText(/^\d+ shown$/).waitFor();
    const live = tab.page.getByRole("checkbox", { name: "Live" });

    // Paused, the page asks nothing; turned on again, its next look finds 60 new generations.
    await live.uncheck();
    const before = (await listedIds()).length;
    await chats(worker, 60);
    await eventually(async () => (await listedIds()).length === before + 60, 20_000);
    await live.check();
    await expect.poll(shownCount, { timeout: 15_000 }).toBe(`${before + 60} shown`);
    await tab.page.getByText("That is every generation.").waitFor();

    // More than the page looks at in one go: it starts again from the newest, and Load more reaches the rest.
    await live.uncheck();
    await chats(worker, 210);
    await eventually(async () => (await listedIds()).length === before + 270, 30_000);
    await live.check();
    const newest = (await listedIds())[0]!;
    await details(newest).waitFor({ timeout: 15_000 });
    const more = tab.page.getByRole("button", { name: "Load more" });
    while (await more.isVisible()) {
      await more.click();
      // A locator's wait, not a function evaluated in the page: the console's CSP refuses eval.
      await tab.page.locator(".activity .actions button", { hasText: "Loading" }).waitFor({ state: "hidden" });
    }
    await tab.page.getByText("That is every generation.").waitFor();
    const shown = await tab.page.getByRole("button", { name: /^Details of / }).evaluateAll((buttons) => buttons.map((b) => b.getAttribute("aria-label")));
    expect(shown.length).toBe(before + 270);
    expect(new Set(shown).size).toBe(shown.length);
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
