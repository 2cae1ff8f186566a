import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/** What the Playground's "Last generation" says a streamed chat cost, whole or failed part-way. */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
let secret: string;

beforeAll(async () => {
  if (browserMissing) return;
  const usual = { prompt: "0.00001", completion: "0.00003" };
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" }],
      models: [
        // 12 prompt and 5 completion tokens, as the fake provider reports them, come to $0.00000022.
        { id: "chat/tiny", name: "Tiny", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.00000001", completion: "0.00000002" } }] },
        // The fake cuts this stream after two chunks: the gateway charges what it estimates was sent.
        { id: "chat/cut", name: "Cut", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "cut", pricing: usual }] },
        // The fake sends this stream's first words, then nothing until the caller goes away: it ends only when stopped.
        { id: "chat/endless", name: "Endless", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "stall-after-first", pricing: usual }] },
      ],
    }),
    { ALPHA_KEY: "alpha-secret" },
  );
  ({ gw, tab } = fixture);
  secret = String((await gw.call("POST", "/keys", { body: { name: "playground" } })).body.key);
}, 120_000);
afterAll(() => fixture?.stop());

const last = () => tab.page.locator("dl[aria-label='Last generation']");
const lastFact = (term: string) => last().locator(`xpath=.//dt[normalize-space()='${term}']/following-sibling::dd[1]`);

async function start(model: string, text: string) {
  await tab.open("playground");
  await tab.page.getByLabel("Model").selectOption(model);
  await tab.page.getByLabel("Inference key").fill(secret);
  await tab.page.getByLabel("Message").fill(text);
  await tab.page.getByRole("button", { name: "Send" }).click();
}

async function send(model: string, text: string) {
  await start(model, text);
  await last().waitFor();
}

/** The charge the generation's record holds, once the record is written. */
async function recordedCost(id: string): Promise<number> {
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`)).status === 200, 10_000);
  return Number((await gw.call("GET", `/generation?id=${id}`)).body.data!.total_cost);
}

describe.skipIf(browserMissing)("console Playground", { timeout: 60_000 }, () => {
  it("shows a cost below a millionth of a dollar with its digits", async () => {
    await send("chat/tiny", "Say hello");
    expect((await lastFact("Cost").textContent())!.trim()).toBe("$0.00000022");
  });

  it("shows what a stream that failed part-way was charged, as its record says", async () => {
    await send("chat/cut", "Say hello, then stop");
    await tab.page.getByRole("alert").waitFor();
    const id = (await last().getByRole("link").textContent())!.trim();
    const record = await gw.call("GET", `/generation?id=${id}`);
    expect(record.status).toBe(200);
    const charged = Number(record.body.data!.total_cost);
    expect(charged).toBeGreaterThan(0);
    await expect.poll(async () => (await lastFact("Cost").textContent())?.trim(), { timeout: 10_000 }).not.toBe("—");
    expect(Number((await lastFact("Cost").textContent())!.trim().replace(/[$,]/g, ""))).toBe(charged);
  });

  it("shows the generation and what its record says it was charged when the operator stops the stream", async () => {
    await start("chat/endless", "Say hello and keep going");
    await tab.page.locator(".message.assistant", { hasText: "Hello" }).waitFor();
    await tab.page.getByRole("button", { name: "Stop" }).click();
    await tab.page.getByRole("status").filter({ hasText: /^Stopped\.$/ }).waitFor();
    await last().waitFor({ timeout: 5_000 });
    const id = (await last().getByRole("link").textContent())!.trim();
    expect(id).not.toBe("");
    const charged = await recordedCost(id);
    expect(charged).toBeGreaterThan(0);
    await expect.poll(async () => (await lastFact("Cost").textContent())?.trim(), { timeout: 10_000 }).not.toBe("—");
    expect(Number((await lastFact("Cost").textContent())!.trim().replace(/[$,]/g, ""))).toBe(charged);
    expect(await tab.page.getByRole("alert").count()).toBe(0);
  });

  it("keeps a stream cleared while it ran cleared, its generation's facts included", async () => {
    await start("chat/endless", "Say hello and keep going");
    await tab.page.locator(".message.assistant", { hasText: "Hello" }).waitFor();
    await tab.page.getByRole("button", { name: "Clear" }).click();
    await tab.page.getByRole("button", { name: "Send" }).and(tab.page.locator(":enabled")).waitFor();
    // Long enough for a stopped stream's facts and its record's cost to have come back, were they kept.
    await tab.page.waitForTimeout(1500);
    expect(await last().count()).toBe(0);
    await tab.page.getByText("No messages yet").waitFor();
    expect(await tab.page.getByRole("status").filter({ hasText: "Stopped." }).count()).toBe(0);
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
