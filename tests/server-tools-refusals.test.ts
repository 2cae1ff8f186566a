import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { agentCatalog, startFakeAgent, toolResults, type FakeAgent, type Message, type Script } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * How the server-tool loop refuses: a stop condition the money code cannot hold is a 400 before anything
 * is held, and a guardrail that blocks what a tool brought back ends the loop with a 403 that names the
 * turns already sent to the provider and what they cost.
 */
let gw: TestGateway;
let agent: FakeAgent;
let pages: { port: string; stop(): Promise<void> };

const secret = "NIGHTJAR";
const host = "pages.test";
const url = (path: string) => `http://${host}:${pages.port}${path}`;
// Each turn of the fake uses 10 prompt and 5 completion tokens: $0.00002.
const turnCost = 0.00002;

const lastUser = (messages: Message[]) => String([...messages].reverse().find((m) => m.role === "user")?.content);
const scripts: Record<string, Script> = {
  // Fetches the URL of the user's message, then says what it read.
  reader: (body) => (toolResults(body.messages).length || body.tool_choice === "none" ? { content: "Read it." } : { content: "Fetching. ", calls: [{ name: "web_fetch", arguments: { url: lastUser(body.messages) } }] }),
  // Asks the time until told it may not.
  forever: (body) => (body.tool_choice === "none" ? { content: `done after ${toolResults(body.messages).length} results` } : { calls: [{ name: "datetime", arguments: {} }] }),
};

beforeAll(async () => {
  agent = await startFakeAgent(scripts);
  const server = createServer((req, res) => {
    if (req.url === "/secret") return void res.writeHead(200, { "content-type": "text/html" }).end(`<p>The code name is ${secret}.</p>`);
    res.writeHead(200, { "content-type": "text/plain" }).end("Nothing to hide.");
  });
  const listening = await listenLocal(server);
  pages = { port: new URL(listening.baseUrl).port, stop: listening.stop };
  const catalog = agentCatalog(agent, Object.keys(scripts));
  const resolve = async (name: string): Promise<LookupAddress[]> => {
    if (name !== host) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
    return [{ address: "127.0.0.1", family: 4 }];
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), FAKE_AGENT_KEY: "agent-secret" }, { webFetchHosts: { resolve, localHosts: [host] } });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await agent?.stop();
  await pages?.stop();
});

/** A new key, under a guardrail that blocks the secret when `guarded`; its hash reads its usage. */
async function newKey(guarded: boolean): Promise<{ key: string; hash: string; guardrail?: string }> {
  const created = await gw.call("POST", "/keys", { body: { name: guarded ? "guarded" : "plain" } });
  const hash = String(created.body.data?.hash);
  if (!guarded) return { key: String(created.body.key), hash };
  const guardrail = await gw.call("POST", "/guardrails", { body: { name: `no ${secret} ${hash.slice(0, 8)}`, content_filters: [{ pattern: secret, action: "block" }] } });
  const id = String(guardrail.body.data?.id);
  expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);
  return { key: String(created.body.key), hash, guardrail: id };
}

const usageOf = async (hash: string) => Number((await gw.call("GET", `/keys/${hash}`)).body.data?.usage);

async function post(key: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), id: res.headers.get("x-generation-id") };
}

describe("a max_cost stop condition", () => {
  it.each([1e300, 1e9 + 1])("refuses max_cost_in_dollars %d with a 400 before anything is held", async (dollars) => {
    const { key, hash } = await newKey(false);
    const before = agent.requests.length;
    const res = await post(key, { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], stop_server_tools_when: [{ type: "max_cost", max_cost_in_dollars: dollars }] });
    expect(res.status, res.text).toBe(400);
    expect(JSON.parse(res.text).error.message).toMatch(/stop_server_tools_when\.0\.max_cost_in_dollars: must be at most 1000000000/);
    expect(agent.requests.length).toBe(before);
    expect(await usageOf(hash)).toBe(0);
  });

  it("takes the largest amount the money code holds, which never fires", async () => {
    const { key } = await newKey(false);
    const conditions = [{ type: "max_cost", max_cost_in_dollars: 1e9 }, { type: "step_count_is", step_count: 2 }];
    const res = await post(key, { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], stop_server_tools_when: conditions });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text).choices[0].message.content).toBe("done after 2 results");
  });
});

describe("a guardrail that blocks what a server tool brought back", () => {
  const ask = (stream: boolean) => ({ model: "agent/reader", stream, messages: [{ role: "user", content: url("/secret") }], tools: [{ type: "openrouter:web_fetch" }] });
  /** What the 403 says of the turn already charged: its count, its cost and its generation id. */
  const charged = (id: string) => new RegExp(`the 1 turn before it reached the provider and is charged \\$0\\.00002 \\(generation ${id}\\)`);

  it("answers 403 saying that the turn before it was charged, and never sends the page to the provider", async () => {
    const { key, hash, guardrail } = await newKey(true);
    const before = agent.requests.length;
    const res = await post(key, ask(false));
    expect(res.status, res.text).toBe(403);
    const error = JSON.parse(res.text).error as { message: string; metadata: Record<string, unknown> };
    expect(error.message).toMatch(new RegExp(`^Request blocked by guardrail ${guardrail}: its content filter pattern:0 matched what a server tool brought back`));
    expect(error.message).toMatch(charged(res.id!));
    expect(error.message).not.toContain(secret);
    expect(error.metadata).toEqual({ guardrail_id: guardrail, filter: "pattern:0", charged_turns: 1, cost: turnCost, generation_ids: [res.id] });
    expect(agent.requests.length).toBe(before + 1);
    await eventually(async () => Math.abs((await usageOf(hash)) - turnCost) < 1e-12, 10_000);
    expect((await gw.call("GET", `/generation?id=${res.id}-2`, { key })).status).toBe(404);
  });

  it("ends a stream that already started with the same error in-band", async () => {
    const { key, guardrail } = await newKey(true);
    const before = agent.requests.length;
    const res = await post(key, ask(true));
    expect(res.status).toBe(200);
    const frames = res.text.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as { error?: { code: number; message: string }; choices: Array<{ delta?: { content?: string } }> });
    expect(frames.flatMap((f) => f.choices.map((c) => c.delta?.content ?? "")).join("")).toBe("Fetching. ");
    const error = frames.at(-1)!.error!;
    expect(error.code).toBe(403);
    expect(error.message).toMatch(new RegExp(`^Request blocked by guardrail ${guardrail}: `));
    expect(error.message).toMatch(charged(res.id!));
    expect(res.text).not.toContain(secret);
    expect(agent.requests.length).toBe(before + 1);
  });

  it("tells the same on /responses streamed and /messages buffered", async () => {
    const { key } = await newKey(true);
    const send = (path: string, body: Record<string, unknown>) =>
      fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const responses = await send("/responses", { model: "agent/reader", stream: true, input: url("/secret"), tools: [{ type: "openrouter:web_fetch" }] });
    const events = await responses.text();
    expect(events).toContain("event: response.failed");
    expect(events).toMatch(charged(responses.headers.get("x-generation-id")!));
    const messages = await send("/messages", { model: "agent/reader", max_tokens: 100, messages: [{ role: "user", content: url("/secret") }], tools: [{ type: "openrouter:web_fetch" }] });
    expect(messages.status).toBe(403);
    const refused = (await messages.json()) as { type: string; error: { type: string; message: string } };
    expect(refused.error.type).toBe("permission_error");
    expect(refused.error.message).toMatch(/is charged \$0\.00002/);
  });

  it("lets a page without the pattern through", async () => {
    const { key } = await newKey(true);
    const res = await post(key, { ...ask(false), messages: [{ role: "user", content: url("/plain") }] });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text).choices[0].message.content).toBe("Fetching. Read it.");
  });
});
