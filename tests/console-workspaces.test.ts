import type { Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/**
 * The console with more workspaces than one page of `GET /workspaces` holds (50 unless asked for more) and
 * more keys than the largest page of `GET /keys` (1000): each page that names workspaces or keys finds the
 * last one created. And the generation drawer asks for the prompt and answer only where the workspace may
 * have kept them.
 */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
/** The workspace created last: after the default one and 54 others, so on the second page of 50. */
let last: { id: string; secret: string };
let logging: { id: string; secret: string };

const pricing = { prompt: "0.00001", completion: "0.00003" };
const lastName = "Team 55";

beforeAll(async () => {
  if (browserMissing) return;
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" },
        { slug: "own", name: "Own", adapter: "openai-compatible", base_url: url, api_key_env: "OWN_KEY" },
      ],
      models: [{ id: "chat/ok", name: "OK", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] }],
    }),
    { ALPHA_KEY: "alpha-secret", SWITCHYARD_ENCRYPTION_KEY: "console-workspaces-encryption-secret-0123456789" },
  );
  ({ gw, tab } = fixture);
  // One at a time, so that their creation order (the list's order) is their numbering.
  const ids: string[] = [];
  for (let i = 1; i <= 55; i++) {
    const name = `Team ${String(i).padStart(2, "0")}`;
    const res = await gw.call("POST", "/workspaces", { body: { name, slug: `team-${i}`, ...(i === 54 ? { is_observability_io_logging_enabled: true } : {}) } });
    expect(res.status).toBe(201);
    ids.push(String(res.body.data!.id));
  }
  expect((await gw.call("GET", "/workspaces")).body.total_count).toBe(56);
  expect((await gw.call("PUT", `/workspaces/${ids[54]}/provider-keys/own`, { body: { key: "sk-last-9876" } })).status).toBe(200);
  last = { id: ids[54]!, secret: await newKey("last workspace's key", ids[54]!) };
  logging = { id: ids[53]!, secret: await newKey("logging workspace's key", ids[53]!) };
}, 180_000);
afterAll(() => fixture?.stop());

async function newKey(name: string, workspaceId: string): Promise<string> {
  const res = await gw.call("POST", "/keys", { body: { name, workspace_id: workspaceId } });
  expect(res.status).toBe(201);
  return String(res.body.key);
}

async function chat(secret: string, content: string): Promise<string> {
  const res = await fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "chat/ok", messages: [{ role: "user", content }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  const id = res.headers.get("x-generation-id")!;
  await eventually(async () => (await gw.call("GET", `/generation?id=${id}`)).status === 200, 10_000);
  return id;
}

const drawer = () => tab.page.getByRole("dialog");
const fact = (term: string) => drawer().locator(`xpath=.//dt[normalize-space()='${term}']/following-sibling::dd[1]`);

/** Opens the drawer of generation `id` on the Activity page, noting every request for logged content meanwhile. */
async function openDrawer(id: string): Promise<string[]> {
  await tab.open("activity");
  const asked: string[] = [];
  const note = (request: Request) => {
    if (request.url().includes("/api/v1/generation/content")) asked.push(request.url());
  };
  tab.page.on("request", note);
  try {
    await tab.page.getByRole("button", { name: `Details of ${id}` }).click({ timeout: 15_000 });
    await drawer().getByRole("heading", { name: "Prompt and answer" }).waitFor();
    // The drawer's facts come with the answers to its requests, so the content's answer is in too.
    await drawer().locator(".notice, pre").first().waitFor();
  } finally {
    tab.page.off("request", note);
  }
  return asked;
}

const closeDrawer = () => drawer().getByRole("button", { name: "Close" }).click();

describe.skipIf(browserMissing)("console with more workspaces and keys than a page", { timeout: 90_000 }, () => {
  it("lists the provider key of a workspace beyond the first page on the Models page", async () => {
    await tab.open("models");
    const table = tab.page.getByRole("table", { name: "Workspace provider keys" });
    await table.waitFor({ timeout: 5_000 });
    await table.locator("tr", { hasText: lastName }).waitFor({ timeout: 5_000 });
    expect(await table.locator("tr", { hasText: lastName }).textContent()).toContain("9876");
  });

  it("offers every workspace when creating a key", async () => {
    await tab.open("keys");
    await tab.page.getByRole("button", { name: "Create key" }).click();
    const dialog = tab.page.getByRole("dialog", { name: "Create key" });
    const select = dialog.getByLabel("Workspace");
    await select.locator("option", { hasText: "Team 01" }).waitFor({ state: "attached" });
    expect(await select.locator("option").count()).toBe(56);
    await select.selectOption({ label: lastName });
    await dialog.getByLabel("Name").fill("made in the last workspace");
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByRole("button", { name: "Done" }).click();
    const keys = (await gw.call("GET", `/keys?workspace_id=${last.id}`)).body.data!;
    expect(keys.map((k) => k.name)).toContain("made in the last workspace");
  });

  it("names a workspace beyond the first page in the generation drawer", async () => {
    const id = await chat(last.secret, "hello from the last workspace");
    await openDrawer(id);
    await expect.poll(async () => (await fact("Workspace").textContent())?.trim(), { timeout: 5_000 }).toBe(lastName);
    await closeDrawer();
  });

  it("asks for no prompt and answer where the workspace keeps none, and says so", async () => {
    const id = await chat(last.secret, "not kept");
    const problemsBefore = tab.problems.length;
    const asked = await openDrawer(id);
    await drawer().getByText("Input/output logging is off for this workspace, so the prompt and answer were not kept.").waitFor();
    expect(asked).toEqual([]);
    expect(tab.problems.slice(problemsBefore).filter((p) => p.includes("404"))).toEqual([]);
    await closeDrawer();
  });

  it("shows the prompt and answer where the workspace keeps them, also after logging was turned off", async () => {
    const id = await chat(logging.secret, "kept while logging was on");
    await eventually(async () => (await gw.call("GET", `/generation/content?id=${id}`)).status === 200, 10_000);
    await openDrawer(id);
    await drawer().getByText("kept while logging was on").waitFor();
    await closeDrawer();

    // What was kept stays readable until its retention passes, whatever the workspace says now.
    expect((await gw.call("PATCH", `/workspaces/${logging.id}`, { body: { is_observability_io_logging_enabled: false } })).status).toBe(200);
    await openDrawer(id);
    await drawer().getByText("kept while logging was on").waitFor();
    await closeDrawer();
  });

  it("names the key of a generation made with a key beyond the first thousand", async () => {
    // Twenty at a time: a thousand keys in a few seconds.
    for (let i = 0; i < 1000; i += 20) {
      const batch = Array.from({ length: 20 }, (_, j) => gw.call("POST", "/keys", { body: { name: `filler ${i + j}` } }));
      expect((await Promise.all(batch)).map((r) => r.status)).toEqual(Array(20).fill(201));
    }
    const secret = await newKey("the thousand and first", last.id);
    expect(Number((await gw.call("GET", "/keys?limit=1")).body.total_count)).toBeGreaterThan(1000);
    const id = await chat(secret, "hello from a late key");
    await tab.open("activity");
    const keyCell = tab.page.locator("tr", { has: tab.page.getByRole("button", { name: `Details of ${id}` }) }).locator("td:nth-child(6)");
    await expect.poll(async () => (await keyCell.textContent())?.trim(), { timeout: 10_000 }).toBe("the thousand and first");
  });

  // Last: the workspace it creates would change the count the key dialog offers.
  it("names a workspace created after the Activity page opened", async () => {
    await tab.open("activity");
    await tab.page.getByText(/^\d+ shown$/).waitFor();
    const res = await gw.call("POST", "/workspaces", { body: { name: "Late team", slug: "late-team" } });
    expect(res.status).toBe(201);
    const id = await chat(await newKey("late team's key", String(res.body.data!.id)), "hello from a new workspace");
    await tab.page.getByRole("button", { name: `Details of ${id}` }).click({ timeout: 15_000 });
    await expect.poll(async () => (await fact("Workspace").textContent())?.trim(), { timeout: 5_000 }).toBe("Late team");
    await closeDrawer();
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
