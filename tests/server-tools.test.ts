import { createServer } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { agentCatalog, startFakeAgent, toolResults, type FakeAgent, type Message, type Script } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

let gw: TestGateway;
let agent: FakeAgent;
let search: { baseUrl: string; queries: string[]; stop(): Promise<void> };
let key: string;
let openai: OpenAI;

const lastUser = (messages: Message[]) => String([...messages].reverse().find((m) => m.role === "user")?.content);
const toolsOff = (body: { tool_choice?: unknown }) => body.tool_choice === "none";

/** Turn one makes the calls the user message lists (JSON); later turns report what the tools said. */
const fromUser: Script = (body) => {
  if (body.messages.some((m) => m.role === "tool")) return { content: `RESULTS ${JSON.stringify(toolResults(body.messages))}` };
  return { content: "Working on it. ", calls: JSON.parse(lastUser(body.messages)) as Array<{ name: string; arguments: unknown }> };
};

const scripts: Record<string, Script> = {
  "from-user": fromUser,
  // Asks the time until told it may not, then says how many answers it got.
  forever: (body) => (toolsOff(body) ? { content: `done after ${toolResults(body.messages).length} results` } : { calls: [{ name: "datetime", arguments: {} }] }),
  // Asks for a time in a timezone that does not exist, so every call fails, until told it may not.
  failing: (body) => (toolsOff(body) ? { content: `done after ${toolResults(body.messages).length} results` } : { calls: [{ name: "datetime", arguments: { timezone: "Mars/Olympus" } }] }),
  triple: (body) => (toolsOff(body) ? { content: "enough" } : { calls: [1, 2, 3].map(() => ({ name: "datetime", arguments: { timezone: "Asia/Tokyo" } })) }),
  // Calls a server tool and the client's own function in one turn.
  mixed: () => ({ content: "Checking. ", calls: [{ name: "datetime", arguments: {} }, { name: "lookup", arguments: { id: 7 } }] }),
};

const slowSearchMs = 1500;
// Each turn of the fake uses 10 prompt and 5 completion tokens: $0.00002.
const turnCost = 0.00002;

beforeAll(async () => {
  agent = await startFakeAgent(scripts);
  const queries: string[] = [];
  const searchServer = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    queries.push(url.searchParams.get("q") ?? "");
    // A search that takes a while, so that the turn after it starts well after the request did.
    if (url.searchParams.get("q") === "slow") await new Promise((resolve) => setTimeout(resolve, slowSearchMs));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        query: url.searchParams.get("q"),
        results: [
          { title: "Switchyard docs", url: "https://docs.switchyard.dev/tools", content: "Server tools run in the gateway. ".repeat(100) },
          { title: "Elsewhere", url: "https://example.com/page", content: "Other site" },
          { title: "Sub", url: "https://blog.switchyard.dev/post", content: "A post" },
        ],
      }),
    );
  });
  const listening = await listenLocal(searchServer);
  search = { baseUrl: listening.baseUrl.replace(/\/v1$/, ""), queries, stop: listening.stop };
  const catalog = agentCatalog(agent, Object.keys(scripts), { supportedParameters: ["tools", "tool_choice", "temperature"] });
  gw = await startTestGateway({
    ...(await catalogEnv(catalog)),
    WEB_SEARCH_URL: search.baseUrl,
    FAKE_AGENT_KEY: "agent-secret",
    SANDBOX_COMMAND_TIMEOUT_MS: "3000",
    SANDBOX_IDLE_MS: "1500",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "agent" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await agent?.stop();
  await search?.stop();
});

type Answer = Record<string, unknown> & {
  choices: Array<{ finish_reason: string; message: { content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> } }>;
  usage: { prompt_tokens: number; completion_tokens: number; cost: number; server_tool_use_details: { tool_calls_requested: number; tool_calls_executed: number; web_search_requests?: number } };
};

/** A server tool call as the answer carries it, in `reasoning_details`, in the shape `@openrouter/sdk` reads. */
type ServerCall = { type: "reasoning.server_tool_call"; tool_name: string; tool_call_id: string; arguments: string; result: string; index: number };
const serverCallsOf = (body: Answer): ServerCall[] =>
  ((body.choices[0]!.message as { reasoning_details?: Array<{ type: string }> }).reasoning_details ?? []).filter((d): d is ServerCall => d.type === "reasoning.server_tool_call");
/** The result the model read for the nth server call. */
const resultOf = (body: Answer, n = 0) => JSON.parse(serverCallsOf(body)[n]!.result) as Record<string, unknown>;

const chat = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await gw.call("POST", "/chat/completions", { key, body: { messages: [{ role: "user", content: "Go" }], ...body }, headers });
  return { status: res.status, body: res.body as unknown as Answer, error: res.body.error, id: res.headers.get("x-generation-id") };
};
const calls = (list: Array<{ name: string; arguments: unknown }>) => JSON.stringify(list);
const turnsSince = (before: number) => agent.requests.slice(before);
/** The id of the call the model made in the turn before this request. */
const turn1Call = (request: Record<string, unknown>) => (request.messages as Message[]).find((m) => m.tool_calls)!.tool_calls![0]!.id;

describe("the server-tool agent loop", () => {
  it("runs the model's datetime call, feeds the result back and sums usage over the turns", async () => {
    const before = agent.requests.length;
    const { data, response } = await openai.chat.completions
      .create({ model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "datetime", arguments: { timezone: "America/New_York" } }]) }], tools: [{ type: "openrouter:datetime" } as never] })
      .withResponse();
    const answer = data as unknown as Answer;
    const [turn1, turn2] = turnsSince(before);
    // Providers see a function tool, never the gateway's own tool type.
    expect(turn1!.tools).toEqual([expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "datetime" }) })]);
    const result = toolResults(turn2!.messages as Message[])[0]!;
    expect(result.timezone).toBe("America/New_York");
    expect(String(result.datetime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-0[45]:00$/);
    expect(Math.abs(Number(result.unix) - Date.now() / 1000)).toBeLessThan(60);
    expect(answer.choices[0]!.message.content).toContain("RESULTS");
    expect(answer.choices[0]!.finish_reason).toBe("stop");
    expect(answer.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 10, server_tool_use_details: { tool_calls_requested: 1, tool_calls_executed: 1 } });
    expect(answer.usage.cost).toBeCloseTo(2 * turnCost, 12);
    expect(serverCallsOf(answer)).toEqual([{ type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: turn1Call(turn2!), arguments: '{"timezone":"America/New_York"}', result: expect.stringContaining('"timezone":"America/New_York"'), index: 0 }]);
    // The answer has the words of every turn, as a stream does.
    expect(answer.choices[0]!.message.content).toMatch(/^Working on it\. RESULTS /);
    // Every turn is its own generation: the first keeps the request's id.
    expect(response.headers.get("x-generation-id")).toBe(data.id);
    await eventually(async () => (await gw.call("GET", `/generation?id=${data.id}`, { key })).status === 200, 5000);
  });

  it("stops at max_tool_calls and runs one last turn with tools disabled", async () => {
    const before = agent.requests.length;
    const { body } = await chat({ model: "agent/forever", tools: [{ type: "openrouter:datetime" }], max_tool_calls: 2 });
    const turns = turnsSince(before);
    expect(turns).toHaveLength(3);
    expect(turns.map((t) => t.tool_choice)).toEqual([undefined, undefined, "none"]);
    expect(body.choices[0]!.message.content).toBe("done after 2 results");
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 2, tool_calls_executed: 2 });
    expect(body.usage.cost).toBeCloseTo(3 * turnCost, 12);
  });

  it("counts failed calls against max_tool_calls", async () => {
    const before = agent.requests.length;
    const { body } = await chat({ model: "agent/failing", tools: [{ type: "openrouter:datetime" }], max_tool_calls: 1 });
    const turns = turnsSince(before);
    expect(turns).toHaveLength(2);
    expect(turns.map((t) => t.tool_choice)).toEqual([undefined, "none"]);
    expect(String(toolResults(turns[1]!.messages as Message[])[0]!.error)).toMatch(/IANA/);
    expect(body.usage.server_tool_use_details).toMatchObject({ tool_calls_requested: 1, tool_calls_executed: 0 });
    expect(body.usage.cost).toBeCloseTo(2 * turnCost, 12);
  });

  it("counts agent steps, not calls: every call of a step runs", async () => {
    const before = agent.requests.length;
    const { body } = await chat({ model: "agent/triple", tools: [{ type: "openrouter:datetime" }], max_tool_calls: 2 });
    // Two steps of three calls each, then the last turn without tools.
    const turns = turnsSince(before);
    expect(turns.map((t) => t.tool_choice)).toEqual([undefined, undefined, "none"]);
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 6, tool_calls_executed: 6 });
    const results = toolResults(turns[2]!.messages as Message[]);
    expect(results.map((r) => r.timezone)).toEqual(Array(6).fill("Asia/Tokyo"));
  });

  it("takes 30 steps by default and refuses more than 30", async () => {
    const before = agent.requests.length;
    const { body } = await chat({ model: "agent/forever", tools: [{ type: "openrouter:datetime" }] });
    expect(turnsSince(before)).toHaveLength(31);
    expect(body.choices[0]!.message.content).toBe("done after 30 results");
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], max_tool_calls: 1000 } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(/max_tool_calls/);
    expect(res.body.error?.message).toMatch(/at most 30/);
    expect(agent.requests.length).toBe(before + 31);
  });

  it("asks the model once without server tools when max_tool_calls is 0", async () => {
    const before = agent.requests.length;
    const { body } = await chat({ model: "agent/forever", tools: [{ type: "openrouter:datetime" }], max_tool_calls: 0 });
    expect(turnsSince(before).map((t) => t.tool_choice)).toEqual(["none"]);
    expect(body.choices[0]!.message.content).toBe("done after 0 results");
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 0, tool_calls_executed: 0 });
  });

  it.each([
    ["step_count_is", [{ type: "step_count_is", step_count: 2 }], 2],
    ["max_cost", [{ type: "max_cost", max_cost_in_dollars: 0.00003 }], 2],
    ["max_tokens_used", [{ type: "max_tokens_used", max_tokens: 40 }], 3],
    // Thresholds are reached at equality, as in the SDK: two turns cost exactly $0.00004 and use 30 tokens.
    ["max_cost at its threshold", [{ type: "max_cost", max_cost_in_dollars: 2 * turnCost }], 2],
    ["max_tokens_used at its threshold", [{ type: "max_tokens_used", max_tokens: 30 }], 2],
    ["step_count_is 1", [{ type: "step_count_is", step_count: 1 }], 1],
    ["has_tool_call", [{ type: "has_tool_call", tool_name: "openrouter:datetime" }], 1],
    ["finish_reason_is", [{ type: "finish_reason_is", reason: "tool_calls" }], 1],
    ["OR of several", [{ type: "step_count_is", step_count: 5 }, { type: "max_tokens_used", max_tokens: 1 }], 1],
  ])("stops on %s, overriding max_tool_calls, after the pending calls ran", async (_name, conditions, steps) => {
    const before = agent.requests.length;
    // max_tool_calls 0 would stop at once; stop conditions replace it.
    const { body } = await chat({ model: "agent/forever", tools: [{ type: "openrouter:datetime" }], max_tool_calls: 0, stop_server_tools_when: conditions });
    const turns = turnsSince(before);
    expect(turns).toHaveLength(steps + 1);
    expect(turns.at(-1)!.tool_choice).toBe("none");
    expect(turns.every((t) => t.stop_server_tools_when === undefined && t.max_tool_calls === undefined)).toBe(true);
    expect(body.choices[0]!.message.content).toBe(`done after ${steps} results`);
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: steps, tool_calls_executed: steps });
    expect(body.usage.cost).toBeCloseTo((steps + 1) * turnCost, 12);
    expect(body.usage.prompt_tokens).toBe(10 * (steps + 1));
  });

  it("returns the client's own function calls and runs only the server's", async () => {
    const { body } = await chat({
      model: "agent/mixed",
      tools: [{ type: "openrouter:datetime" }, { type: "function", function: { name: "lookup", parameters: { type: "object", properties: { id: { type: "integer" } } } } }],
    });
    expect(body.choices[0]!.finish_reason).toBe("tool_calls");
    expect(body.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(["lookup"]);
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
  });

  it("streams every turn's words, hides server tool calls and ends with the summed usage", async () => {
    const stream = await openai.chat.completions.create({
      model: "agent/mixed",
      stream: true,
      messages: [{ role: "user", content: "Go" }],
      tools: [{ type: "openrouter:datetime" } as never, { type: "function", function: { name: "lookup" } }],
    });
    let text = "";
    const toolNames: string[] = [];
    const indexes: number[] = [];
    let finish: string | null = null;
    let usage: Answer["usage"] | undefined;
    let serverCalls = 0;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        const details = (choice.delta as { reasoning_details?: Array<{ type: string }> }).reasoning_details ?? [];
        serverCalls += details.filter((d) => d.type === "reasoning.server_tool_call").length;
        text += choice.delta.content ?? "";
        for (const call of choice.delta.tool_calls ?? []) {
          indexes.push(call.index);
          if (call.function?.name) toolNames.push(call.function.name);
        }
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage as unknown as Answer["usage"];
    }
    expect(text).toBe("Checking. ");
    expect(toolNames).toEqual(["lookup"]);
    expect(new Set(indexes)).toEqual(new Set([0]));
    expect(finish).toBe("tool_calls");
    expect(serverCalls).toBe(1);
    expect(usage!.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
  });

  it("streams a loop of several turns to its last answer", async () => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "agent/forever", stream: true, messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], max_tool_calls: 3 }),
    });
    const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    expect(frames.at(-1)).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f) as { choices: Array<{ delta: { content?: string; tool_calls?: unknown }; finish_reason: string | null }>; usage?: Answer["usage"] });
    expect(chunks.flatMap((c) => c.choices.map((x) => x.delta.content ?? "")).join("")).toBe("done after 3 results");
    expect(chunks.some((c) => c.choices.some((x) => x.delta.tool_calls))).toBe(false);
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(["stop"]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 40, server_tool_use_details: { tool_calls_requested: 3, tool_calls_executed: 3 } });
    expect(chunks.at(-1)!.usage!.cost).toBeCloseTo(4 * turnCost, 12);
  });

  it("charges every turn to the key", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "turns" } });
    const own = String(created.body.key);
    const ownHash = String((created.body.data as Record<string, unknown>).hash);
    const res = await gw.call("POST", "/chat/completions", { key: own, body: { model: "agent/forever", messages: [{ role: "user", content: "Go" }], tools: [{ type: "openrouter:datetime" }], max_tool_calls: 1 } });
    expect(res.status).toBe(200);
    const usage = async () => Number((await gw.call("GET", `/keys/${ownHash}`)).body.data?.usage);
    await eventually(async () => Math.abs((await usage()) - 2 * turnCost) < 1e-12, 10_000);
  });
});

describe("generation records of the turns", () => {
  type Record = { generation_time: number; latency: number | null; streamed: boolean };
  const generation = async (id: string) => {
    let found: Awaited<ReturnType<typeof gw.call>> | undefined;
    await eventually(async () => (found = await gw.call("GET", `/generation?id=${id}`, { key })).status === 200, 5000);
    return found!.body.data as unknown as Record;
  };
  const slowSearch = { model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "web_search", arguments: { query: "slow" } }]) }], tools: [{ type: "openrouter:web_search" }] };

  it.each([false, true])("records turn n as <id>-n, each timed from its own start (stream: %s)", async (stream) => {
    const res = await fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-openrouter-metadata": "enabled" },
      body: JSON.stringify({ ...slowSearch, stream }),
    });
    const text = await res.text();
    const id = res.headers.get("x-generation-id")!;
    const [first, second] = [await generation(id), await generation(`${id}-2`)];
    expect([first.streamed, second.streamed]).toEqual([stream, stream]);
    // The second turn started after the search: timed from the request's start it would take longer than it.
    expect(second.generation_time).toBeLessThan(slowSearchMs);
    if (stream) expect(second.latency).toBeLessThan(slowSearchMs);
    expect((await gw.call("GET", `/generation?id=${id}-3`, { key })).status).toBe(404);
    // The answer's own metadata covers the whole request, and the endpoint of its last turn.
    const last = stream ? (JSON.parse(text.split("\n\n").filter((f) => f.startsWith("data: {")).at(-1)!.slice(6)) as Answer) : (JSON.parse(text) as Answer);
    const metadata = last.openrouter_metadata as { attempt: number; generation_time: number };
    expect(metadata.attempt).toBe(1);
    expect(metadata.generation_time).toBeGreaterThanOrEqual(slowSearchMs);
  });
});

describe("web search", () => {
  it("searches the operator's backend, keeps the allowed domains and trims excerpts", async () => {
    const { body } = await chat({
      model: "agent/from-user",
      messages: [{ role: "user", content: calls([{ name: "web_search", arguments: { query: "switchyard tools" } }]) }],
      tools: [{ type: "openrouter:web_search", parameters: { allowed_domains: ["switchyard.dev"], max_results: 5, max_characters: 40 } }],
    });
    expect(search.queries.at(-1)).toBe("switchyard tools");
    const result = resultOf(body) as { results: Array<{ url: string; snippet: string }> };
    expect(result.results.map((r) => r.url)).toEqual(["https://docs.switchyard.dev/tools", "https://blog.switchyard.dev/post"]);
    expect(result.results[0]!.snippet).toHaveLength(40);
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1, web_search_requests: 1 });
  });

  const urlsFrom = (body: Answer) => (resultOf(body) as { results: Array<{ url: string; snippet: string }> }).results;
  const searchWith = async (tool: Record<string, unknown>) =>
    chat({ model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "web_search", arguments: { query: "switchyard" } }]) }], tools: [tool] });

  it.each([
    ["top-level allowed_domains of the shorthand", { type: "web_search", allowed_domains: ["switchyard.dev"] }, ["https://docs.switchyard.dev/tools", "https://blog.switchyard.dev/post"]],
    ["top-level excluded_domains of a dated type", { type: "web_search_2025_08_26", excluded_domains: ["docs.switchyard.dev"] }, ["https://example.com/page", "https://blog.switchyard.dev/post"]],
    ["legacy filters.blocked_domains", { type: "web_search_preview_2025_03_11", filters: { blocked_domains: ["example.com"] } }, ["https://docs.switchyard.dev/tools", "https://blog.switchyard.dev/post"]],
    ["legacy filters.allowed_domains, written as URLs", { type: "web_search_preview", filters: { allowed_domains: ["https://Blog.Switchyard.dev/"] } }, ["https://blog.switchyard.dev/post"]],
    ["top-level max_results", { type: "web_search", max_results: 1 }, ["https://docs.switchyard.dev/tools"]],
    ["parameters and the same value at the top level", { type: "web_search", allowed_domains: ["example.com"], parameters: { allowed_domains: ["example.com"] } }, ["https://example.com/page"]],
  ])("applies %s", async (_name, tool, urls) => {
    const { status, body } = await searchWith(tool);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(urlsFrom(body).map((r) => r.url)).toEqual(urls);
  });

  it("trims excerpts to a top-level max_characters", async () => {
    const { body } = await searchWith({ type: "web_search", max_characters: 12 });
    expect(urlsFrom(body)[0]!.snippet).toHaveLength(12);
  });

  it.each([
    [{ type: "web_search", allowed_domains: "switchyard.dev" }, /allowed_domains: must be an array of domain names/],
    [{ type: "web_search", allowed_domains: ["a.com"], parameters: { allowed_domains: ["b.com"] } }, /allowed_domains is given in tools\.0\.parameters and in tools\.0 with different values/],
    [{ type: "web_search_2025_08_26", allowed_domains: ["a.com"], filters: { blocked_domains: ["b.com"] } }, /cannot be used with/],
    [{ type: "web_search", max_uses: 0 }, /max_uses must be a positive integer/],
  ])("refuses %j", async (tool, message) => {
    const { status, error } = await searchWith(tool);
    expect(status).toBe(400);
    expect(error!.message).toMatch(message);
  });

  it("refuses searches past max_uses with an error result", async () => {
    const { body } = await chat({
      model: "agent/from-user",
      messages: [{ role: "user", content: calls([{ name: "web_search", arguments: { query: "one" } }, { name: "web_search", arguments: { query: "two" } }]) }],
      tools: [{ type: "openrouter:web_search", parameters: { max_uses: 1 } }],
    });
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 2, tool_calls_executed: 1, web_search_requests: 1 });
    expect(resultOf(body, 1).error).toMatch(/limit of 1 searches/);
  });
});

describe("refusals before any spend", () => {
  it.each([
    [{ type: "openrouter:image_generation" }, /not a server tool this gateway runs/],
    [{ type: "openrouter:shell", parameters: { environment: { type: "container_auto", network_policy: { type: "allowlist", allowed_domains: ["*"] } } } }, /only \{"type": "disabled"\}/],
    [{ type: "openrouter:shell", parameters: { environment: { type: "container_reference", container_id: "bad id!" } } }, /container_id/],
    [{ type: "openrouter:datetime", parameters: { timezone: "Mars/Olympus" } }, /IANA/],
    [{ type: "openrouter:web_search", parameters: { allowed_domains: ["a.com"], excluded_domains: ["b.com"] } }, /cannot be used with/],
  ])("refuses %j", async (tool, message) => {
    const before = agent.requests.length;
    const { status, error } = await chat({ model: "agent/forever", tools: [tool] });
    expect(status).toBe(400);
    expect(error!.message).toMatch(message);
    expect(agent.requests.length).toBe(before);
  });

  it("refuses a function that takes a server tool's name", async () => {
    const { status, error } = await chat({ model: "agent/forever", tools: [{ type: "openrouter:datetime" }, { type: "function", function: { name: "datetime" } }] });
    expect(status).toBe(400);
    expect(error!.message).toMatch(/clashes/);
  });

  it("refuses a server tool the workspace disabled", async () => {
    const workspaces = await gw.call("GET", "/workspaces");
    const workspace = (workspaces.body.data as Array<Record<string, unknown>>).find((w) => w.is_default)!;
    expect((await gw.call("PATCH", `/workspaces/${String(workspace.id)}`, { body: { disabled_server_tools: ["openrouter:web_search"] } })).status).toBe(200);
    try {
      // Catalog's cached workspace preferences are dropped by an event, which may take a moment over NATS.
      let answer: Awaited<ReturnType<typeof chat>> | undefined;
      await eventually(async () => (answer = await chat({ model: "agent/forever", tools: [{ type: "openrouter:web_search" }] })).status === 400, 5000);
      expect(answer!.error!.message).toMatch(/disabled for this workspace/);
    } finally {
      await gw.call("PATCH", `/workspaces/${String(workspace.id)}`, { body: { disabled_server_tools: null } });
    }
  });
});

describe("sandboxed shell", () => {
  const shell = (commands: string[], extra: Record<string, unknown> = {}, tool: Record<string, unknown> = { type: "openrouter:shell" }) =>
    chat({ model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "shell", arguments: { commands } }]) }], tools: [tool], ...extra });
  const outputOf = (body: Answer) => resultOf(body) as unknown as { container_id: string; results: Array<{ stdout: string; stderr: string; exit_code: number | null; timed_out: boolean; truncated: boolean; error?: string }>; error?: string };
  type FileList = { data: Array<{ id: string; path: string; bytes: number; container_id: string }>; has_more: boolean; last_id: string };
  const files = async (id: string, query = "") => (await gw.call("GET", `/containers/${id}/files${query}`, { key })).body as unknown as FileList;

  it("runs commands in the session's container, and lists the files they wrote in path order", async () => {
    const { body } = await shell(["mkdir -p out/deep && printf 'hello' > out/deep/a.txt && printf '12345678' > b.txt && printf x > 'Z upper.txt'", "cat b.txt; echo; id -un"], { session_id: "chat 42/éa" });
    const output = outputOf(body);
    expect(output.container_id).toBe("sess_chat_42__a");
    expect(output.results[1]).toMatchObject({ stdout: "12345678\nsandbox\n", exit_code: 0, timed_out: false });
    const listed = await files(output.container_id);
    expect(listed.data.map((f) => [f.path, f.bytes])).toEqual([["Z upper.txt", 1], ["b.txt", 8], ["out/deep/a.txt", 5]]);
    expect(listed.data[2]!.id).toBe(`cfile_${Buffer.from("out/deep/a.txt").toString("base64url")}`);
    const page = await files(output.container_id, "?limit=2");
    expect(page.has_more).toBe(true);
    expect((await files(output.container_id, `?after=${page.last_id}`)).data.map((f) => f.path)).toEqual(["out/deep/a.txt"]);
    const content = await fetch(`${gw.apiUrl}/containers/${output.container_id}/files/${listed.data[1]!.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(await content.text()).toBe("12345678");
    // The same session reattaches to the same container and its files.
    const again = outputOf((await shell(["cat out/deep/a.txt"], { session_id: "chat 42/éa" })).body);
    expect(again).toMatchObject({ container_id: "sess_chat_42__a", results: [{ stdout: "hello" }] });
  });

  it("names a container after the request when there is no session, and takes a named container as asked", async () => {
    const { body, id } = await shell(["echo one > one.txt"]);
    const container = outputOf(body).container_id;
    expect(container).toMatch(/^gen_[A-Za-z0-9_-]{1,27}$/);
    expect(container.slice(4, 16)).toBe(id!.replace(/^gen-/, "").slice(0, 12));
    const named = { type: "openrouter:shell", parameters: { environment: { type: "container_reference", container_id: "team-box_1" } } };
    expect(outputOf((await shell(["echo kept > kept.txt"], {}, named)).body).container_id).toBe("team-box_1");
    expect(outputOf((await shell(["cat kept.txt"], {}, named)).body).results[0]!.stdout).toBe("kept\n");
  });

  it("ends escape attempts with a clear tool error and keeps serving", async () => {
    const port = new URL(gw.baseUrl).port;
    const attempts = [
      `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${port}), 2)"`,
      "getent hosts registry.npmjs.org || echo no-dns",
      "cat /etc/shadow; ls /root; ls /proc/1/root/ 2>&1 | head -3",
      "bomb() { bomb | bomb & }; bomb; sleep 10",
      "head -c 10000000 /dev/zero | tr '\\0' y",
      "while :; do :; done",
    ];
    const started = Date.now();
    const { body } = await shell(attempts, { session_id: "escape" });
    const [network, dns, host, bomb, output, runaway] = outputOf(body).results;
    expect(network!.exit_code).not.toBe(0);
    expect(network!.stderr).toMatch(/refused|unreachable/i);
    expect(dns!.stdout).toContain("no-dns");
    expect(host!.stdout + host!.stderr).toMatch(/No such file/);
    expect(host!.stdout).not.toMatch(/root:/);
    expect(bomb).toMatchObject({ timed_out: true, exit_code: null });
    expect(bomb!.error).toMatch(/timed out after 3000 ms/);
    expect(output!.truncated).toBe(true);
    expect(output!.stdout.length).toBe(64 * 1024);
    expect(runaway).toMatchObject({ timed_out: true });
    expect(Date.now() - started).toBeLessThan(30_000);
    // The gateway answered the whole request, and answers the next one.
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
    expect(outputOf((await shell(["echo fine"], { session_id: "escape" })).body).results[0]!.stdout).toBe("fine\n");
  });

  it("refuses nested namespaces and mounts, and shows nothing of the host in /proc", async () => {
    const { body } = await shell(
      [
        "unshare -Ur id",
        "unshare -Urm sh -c 'mount -t tmpfs none /tmp && echo mounted'",
        "grep Seccomp: /proc/self/status; wc -c < /proc/cmdline; ls /proc | grep -cE '^[0-9]+$'",
        "tr '\\0' ' ' < /proc/1/cmdline; echo; tr '\\0' ' ' < /proc/1/environ",
      ],
      { session_id: "locked" },
    );
    const [userns, mount, proc, first] = outputOf(body).results;
    expect(userns!.exit_code).not.toBe(0);
    expect(userns!.stdout).not.toContain("uid=0");
    expect(userns!.stderr).toMatch(/Operation not permitted/);
    expect(mount!.stdout).not.toContain("mounted");
    // The filter is loaded, the kernel's boot arguments are hidden, and /proc lists a handful of the container's own pids.
    const [seccomp, cmdlineBytes, pids] = proc!.stdout.trim().split("\n");
    expect(seccomp).toMatch(/^Seccomp:\s+2$/);
    expect(cmdlineBytes).toBe("0");
    expect(Number(pids)).toBeLessThan(10);
    expect(first!.stdout).not.toContain(process.cwd());
    expect(first!.stdout).not.toMatch(/switchyard-sandboxes|--bind/);
  });

  it("ends a command whose client went away, and the commands after it", async () => {
    const bash = { type: "openrouter:bash", parameters: { engine: "openrouter" } };
    const body = (command: string) =>
      JSON.stringify({ model: "agent/from-user", session_id: "abandoned", messages: [{ role: "user", content: calls([{ name: "bash", arguments: { command } }]) }], tools: [bash] });
    // The container exists, with a file, before the command that is abandoned.
    await chat(JSON.parse(body("echo early > early.txt")) as Record<string, unknown>);
    expect((await files("sess_abandoned")).data.map((f) => f.path)).toEqual(["early.txt"]);
    const abort = new AbortController();
    const sent = fetch(`${gw.apiUrl}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body("sleep 2 && echo late > late.txt"),
      signal: abort.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    abort.abort();
    await expect(sent).rejects.toThrow();
    // Had the command gone on, its file would be synced and listed by now.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await files("sess_abandoned")).data.map((f) => f.path)).not.toContain("late.txt");
  });

  it("starts a new -r<nonce> container on a bash restart and after the old one went idle", async () => {
    const bash = { type: "openrouter:bash", parameters: { engine: "openrouter" } };
    const run = async (args: Record<string, unknown>) => {
      const { body } = await chat({ model: "agent/from-user", session_id: "restartable", messages: [{ role: "user", content: calls([{ name: "bash", arguments: args }]) }], tools: [bash] });
      return resultOf(body) as { container_id: string; stdout: string; exit_code: number };
    };
    const first = await run({ command: "echo 1 > state.txt && cat state.txt" });
    expect(first).toMatchObject({ container_id: "sess_restartable", stdout: "1\n", exit_code: 0 });
    const restarted = await run({ command: "ls", restart: true });
    expect(restarted.container_id).toMatch(/^sess_restartable-r[A-Za-z0-9]{6}$/);
    expect(restarted.stdout).toBe("");
    // The old container's files stay listed.
    expect((await files("sess_restartable")).data.map((f) => f.path)).toEqual(["state.txt"]);
    // SANDBOX_IDLE_MS is 1.5 s: after it the container is removed and the session gets a new one.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const revived = await run({ command: "ls" });
    expect(revived.container_id).toMatch(/^sess_restartable-r[A-Za-z0-9]{6}$/);
    expect(revived.container_id).not.toBe(restarted.container_id);
  });

  it("hands bash calls back to the client unless the openrouter engine is asked for", async () => {
    const { body } = await chat({ model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "bash", arguments: { command: "ls" } }]) }], tools: [{ type: "openrouter:bash" }] });
    expect(body.choices[0]!.finish_reason).toBe("tool_calls");
    expect(body.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(["bash"]);
    expect(body.usage.server_tool_use_details).toEqual({ tool_calls_requested: 0, tool_calls_executed: 0 });
  });

  it("keeps another workspace out of a container", async () => {
    const workspace = await gw.call("POST", "/workspaces", { body: { name: "Other", slug: "other-tools" } });
    const other = await gw.call("POST", "/keys", { body: { name: "other", workspace_id: String((workspace.body.data as Record<string, unknown>).id) } });
    const otherKey = String(other.body.key);
    // Another workspace's container is, to this key, one that holds nothing (the list has no 404).
    expect((await gw.call("GET", "/containers/sess_chat_42__a/files", { key: otherKey })).body).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false });
    const named = { type: "openrouter:shell", parameters: { environment: { type: "container_reference", container_id: "team-box_1" } } };
    const res = await gw.call("POST", "/chat/completions", { key: otherKey, body: { model: "agent/from-user", messages: [{ role: "user", content: calls([{ name: "shell", arguments: { commands: ["ls"] } }]) }], tools: [named] } });
    const answer = res.body as unknown as Answer;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(resultOf(answer).error).toMatch(/team-box_1 is taken/);
    expect(answer.usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 0 });
  });
});
