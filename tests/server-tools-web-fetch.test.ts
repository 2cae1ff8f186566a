import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { OpenRouter } from "@openrouter/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeAgent, toolResults, type FakeAgent, type Message, type Script } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { collect, completedOf } from "./support/responses-events.js";

let gw: TestGateway;
let agent: FakeAgent;
let pages: { port: string; served: string[]; stop(): Promise<void> };
let key: string;
let openai: OpenAI;
let claude: Anthropic;

const article = `<!doctype html><html><head><title>Switchyard field notes</title>
<script>window.SECRET_SCRIPT = "never read";</script><style>p { color: teal }</style></head>
<body><h1>Field notes</h1><p>The gateway fetched this page
   itself.</p></body></html>`;

const lastUser = (messages: Message[]) => String([...messages].reverse().find((m) => m.role === "user")?.content);
/** The URLs to fetch are the user's message, one per line; with results in, the model says what it read. */
const reader: Script = (body) => {
  const results = toolResults(body.messages);
  if (results.length || body.tool_choice === "none") return { content: `READ ${JSON.stringify(results)}` };
  return { content: "Fetching. ", calls: lastUser(body.messages).split("\n").map((url) => ({ name: "web_fetch", arguments: { url } })) };
};

/** A made-up host name of the local page server: only it may resolve to loopback. */
const host = "pages.test";
const url = (path: string) => `http://${host}:${pages.port}${path}`;

beforeAll(async () => {
  agent = await startFakeAgent({ reader });
  const served: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? "";
    served.push(path);
    if (path === "/article") return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(article);
    if (path === "/to-loopback") return void res.writeHead(302, { location: `http://127.0.0.1:${pages.port}/article` }).end();
    res.writeHead(404).end("no such page");
  });
  const listening = await listenLocal(server);
  pages = { port: new URL(listening.baseUrl).port, served, stop: listening.stop };
  const catalog = {
    providers: [{ slug: "fake", name: "Fake", adapter: "openai-compatible", base_url: agent.baseUrl, api_key_env: "FAKE_AGENT_KEY" }],
    models: [
      {
        id: "agent/reader",
        name: "reader",
        context_length: 8000,
        endpoints: [{ provider: "fake", upstream_model: "reader", pricing: { prompt: "0.000001", completion: "0.000002" }, max_completion_tokens: 100, supported_parameters: ["tools", "tool_choice"] }],
      },
    ],
  };
  const resolve = async (name: string): Promise<LookupAddress[]> => {
    if (name !== host) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
    return [{ address: "127.0.0.1", family: 4 }];
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), FAKE_AGENT_KEY: "agent-secret" }, { webFetchHosts: { resolve, localHosts: [host] } });
  key = String((await gw.call("POST", "/keys", { body: { name: "web-fetch" } })).body.key);
  openai = new OpenAI({ apiKey: key, baseURL: gw.apiUrl });
  claude = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await agent?.stop();
  await pages?.stop();
});

type ServerCall = { type: string; tool_name: string; tool_call_id: string; arguments: string; result: string; index: number };
const serverCallsOf = (message: unknown): ServerCall[] =>
  ((message as { reasoning_details?: ServerCall[] }).reasoning_details ?? []).filter((d) => d.type === "reasoning.server_tool_call");
const webFetchTool = { type: "openrouter:web_fetch" } as never;

describe("openrouter:web_fetch on chat completions", () => {
  it("fetches the page the model asks for, feeds its text back and shows the call in the answer", async () => {
    const before = agent.requests.length;
    const answer = await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: url("/article") }], tools: [webFetchTool] });
    const [turn1, turn2] = agent.requests.slice(before);
    expect(turn1!.tools).toEqual([expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "web_fetch" }) })]);
    const read = toolResults(turn2!.messages as Message[]);
    expect(read).toEqual([
      { url: url("/article"), title: "Switchyard field notes", status: 200, content_type: "text/html", content: "Field notes\n\nThe gateway fetched this page itself." },
    ]);
    expect(JSON.stringify(turn2!.messages)).not.toContain("SECRET_SCRIPT");
    const message = answer.choices[0]!.message;
    expect(message.content).toBe(`Fetching. READ ${JSON.stringify(read)}`);
    const calls = serverCallsOf(message);
    expect(calls).toEqual([{ type: "reasoning.server_tool_call", tool_name: "openrouter:web_fetch", tool_call_id: expect.any(String), arguments: JSON.stringify({ url: url("/article") }), result: JSON.stringify(read[0]), index: 0 }]);
    expect(answer.usage).toMatchObject({ server_tool_use_details: { tool_calls_requested: 1, tool_calls_executed: 1 } });
  });

  it("streams the call in reasoning_details", async () => {
    const stream = await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: url("/article") }], tools: [webFetchTool], stream: true });
    const calls: ServerCall[] = [];
    let text = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      text += delta.content ?? "";
      calls.push(...serverCallsOf(delta));
    }
    expect(calls.map((c) => c.tool_name)).toEqual(["openrouter:web_fetch"]);
    expect(JSON.parse(calls[0]!.result)).toMatchObject({ title: "Switchyard field notes" });
    expect(text).toContain("The gateway fetched this page itself.");
  });

  it("gives the model an error, not the page, for a redirect to a loopback address or a host it cannot fetch", async () => {
    pages.served.length = 0;
    const before = agent.requests.length;
    const answer = await openai.chat.completions.create({
      model: "agent/reader",
      messages: [{ role: "user", content: [url("/to-loopback"), "http://elsewhere.test/x", url("/missing")].join("\n") }],
      tools: [webFetchTool],
    });
    const read = toolResults(agent.requests[before + 1]!.messages as Message[]);
    expect(read).toEqual([
      { error: expect.stringMatching(/refusing 127\.0\.0\.1: it resolves to 127\.0\.0\.1, a loopback address/) },
      { error: expect.stringMatching(/cannot resolve elsewhere\.test/) },
      { error: expect.stringMatching(/answered 404/), status: 404 },
    ]);
    // The redirect was asked for; what it pointed at was not.
    expect(pages.served).toEqual(["/to-loopback", "/missing"]);
    expect(answer.usage).toMatchObject({ server_tool_use_details: { tool_calls_requested: 3, tool_calls_executed: 0 } });
    expect(serverCallsOf(answer.choices[0]!.message).map((c) => JSON.parse(c.result) as unknown)).toEqual(read);
  });

  it("honours max_uses, max_content_tokens and the domain lists", async () => {
    const before = agent.requests.length;
    const tool = { type: "openrouter:web_fetch", parameters: { max_uses: 1, max_content_tokens: 3 } } as never;
    await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: [url("/article"), url("/article")].join("\n") }], tools: [tool] });
    const read = toolResults(agent.requests[before + 1]!.messages as Message[]);
    expect(read).toEqual([expect.objectContaining({ content: "Field notes\n", truncated: true }), { error: "the limit of 1 fetches for this request is reached" }]);

    const allowed = { type: "openrouter:web_fetch", parameters: { allowed_domains: ["docs.example.com"] } } as never;
    await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: url("/article") }], tools: [allowed] });
    expect(toolResults(agent.requests.at(-1)!.messages as Message[])).toEqual([{ error: "refusing pages.test: it is not in allowed_domains" }]);
  });

  it("refuses settings it cannot honour before anything is spent", async () => {
    const before = agent.requests.length;
    for (const parameters of [{ engine: "exa" }, { max_uses: 0 }, { allowed_domains: "example.com" }]) {
      const res = await gw.call("POST", "/chat/completions", { key, body: { model: "agent/reader", messages: [{ role: "user", content: "x" }], tools: [{ type: "openrouter:web_fetch", parameters }] } });
      expect(res.status).toBe(400);
      expect(res.body.error?.message).toMatch(/tools\.0\.parameters\.(engine|max_uses|allowed_domains)/);
    }
    expect(agent.requests.length).toBe(before);
  });

  it("honours the same settings at the tool's top level, and both forms when they agree", async () => {
    const before = agent.requests.length;
    const topLevel = { type: "openrouter:web_fetch", max_uses: 1, max_content_tokens: 3, parameters: { max_content_tokens: 3 } } as never;
    await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: [url("/article"), url("/article")].join("\n") }], tools: [topLevel] });
    expect(toolResults(agent.requests[before + 1]!.messages as Message[])).toEqual([expect.objectContaining({ content: "Field notes\n", truncated: true }), { error: "the limit of 1 fetches for this request is reached" }]);

    pages.served.length = 0;
    const elsewhere = { type: "openrouter:web_fetch", allowed_domains: ["nothing.example"], engine: "openrouter" } as never;
    await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: url("/article") }], tools: [elsewhere] });
    expect(toolResults(agent.requests.at(-1)!.messages as Message[])).toEqual([{ error: "refusing pages.test: it is not in allowed_domains" }]);
    expect(pages.served).toEqual([]);
  });

  it.each([
    [{ max_uses: 1, parameters: { max_uses: 2 } }, /tools\.0: max_uses is given in tools\.0\.parameters and in tools\.0 with different values/],
    [{ allowed_domains: ["a.example"], parameters: { allowed_domains: ["b.example"] } }, /tools\.0: allowed_domains is given in tools\.0\.parameters and in tools\.0 with different values/],
    [{ engine: "auto", parameters: { engine: "openrouter" } }, /tools\.0: engine is given/],
    [{ max_uses: 0 }, /tools\.0\.max_uses: must be a positive integer/],
    [{ blocked_domains: "b.example" }, /tools\.0\.blocked_domains: must be an array of domain names/],
    [{ engine: "exa" }, /tools\.0\.engine: this gateway fetches pages itself/],
    [{ max_use: 1 }, /tools\.0\.max_use: unknown field; openrouter:web_fetch takes engine, max_uses, max_content_tokens, allowed_domains and blocked_domains/],
    [{ parameters: { max_tokens: 5 } }, /tools\.0\.parameters\.max_tokens: unknown field/],
  ])("refuses %j before anything is spent", async (settings, message) => {
    const before = agent.requests.length;
    const res = await gw.call("POST", "/chat/completions", { key, body: { model: "agent/reader", messages: [{ role: "user", content: "x" }], tools: [{ type: "openrouter:web_fetch", ...settings }] } });
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(message);
    expect(agent.requests.length).toBe(before);
  });

  it("replays a call an earlier answer carried as history, without fetching again", async () => {
    const first = await openai.chat.completions.create({ model: "agent/reader", messages: [{ role: "user", content: url("/article") }], tools: [webFetchTool] });
    pages.served.length = 0;
    const before = agent.requests.length;
    await openai.chat.completions.create({
      model: "agent/reader",
      messages: [{ role: "user", content: url("/article") }, first.choices[0]!.message as never, { role: "user", content: "Thanks" }],
      tools: [webFetchTool],
    });
    expect(pages.served).toEqual([]);
    const sent = agent.requests[before]!.messages as Message[];
    expect(sent.find((m) => m.tool_calls)?.tool_calls?.[0]?.function.name).toBe("web_fetch");
    expect(toolResults(sent)).toEqual([expect.objectContaining({ title: "Switchyard field notes" })]);
  });
});

describe("openrouter:web_fetch on responses", () => {
  it("shows the call as an openrouter:web_fetch item, buffered and streamed", async () => {
    const params = { model: "agent/reader", input: url("/article"), tools: [webFetchTool] };
    const buffered = await openai.responses.create(params);
    const item = { type: "openrouter:web_fetch", status: "completed", url: url("/article"), title: "Switchyard field notes", content: "Field notes\n\nThe gateway fetched this page itself.", httpStatus: 200 };
    expect(buffered.output.map((i) => i.type)).toEqual(["openrouter:web_fetch", "message"]);
    expect(buffered.output[0]).toEqual({ id: expect.stringMatching(/^wf_/), ...item });
    expect(buffered.output_text).toContain("The gateway fetched this page itself.");
    const streamed = completedOf(await collect(await openai.responses.create({ ...params, stream: true })));
    expect(streamed.output.find((i) => String(i.type) === "openrouter:web_fetch")).toMatchObject(item);
  });

  it("is an item @openrouter/sdk parses, failed fetches with their error", async () => {
    const client = new OpenRouter({ apiKey: key, serverURL: gw.apiUrl });
    const result = await client.responses.send({ responsesRequest: { model: "agent/reader", input: [url("/article"), url("/missing")].join("\n"), tools: [{ type: "openrouter:web_fetch" }] } });
    if (Symbol.asyncIterator in result) throw new Error("expected a buffered response");
    const [ok, failed] = result.output;
    expect(ok).toMatchObject({ type: "openrouter:web_fetch", status: "completed", title: "Switchyard field notes", httpStatus: 200 });
    expect(failed).toMatchObject({ type: "openrouter:web_fetch", status: "incomplete", url: url("/missing"), httpStatus: 404, error: expect.stringMatching(/answered 404/) });
  });

  it("replays an earlier answer's item as the call and the result it was", async () => {
    const first = await openai.responses.create({ model: "agent/reader", input: url("/article"), tools: [webFetchTool] });
    pages.served.length = 0;
    const before = agent.requests.length;
    await openai.responses.create({ model: "agent/reader", input: [{ role: "user", content: url("/article") }, ...(first.output as never[]), { role: "user", content: "Thanks" }], tools: [webFetchTool] });
    expect(pages.served).toEqual([]);
    const sent = agent.requests[before]!.messages as Message[];
    expect(sent.find((m) => m.tool_calls)?.tool_calls?.[0]?.function).toEqual({ name: "web_fetch", arguments: JSON.stringify({ url: url("/article") }) });
    expect(toolResults(sent)).toEqual([{ url: url("/article"), title: "Switchyard field notes", content: "Field notes\n\nThe gateway fetched this page itself.", httpStatus: 200 }]);
  });
});

describe("Anthropic's web_fetch tool on /messages", () => {
  const tools = [{ type: "web_fetch_20250910", name: "web_fetch", max_uses: 2 }] as unknown as Anthropic.ToolUnion[];
  const ask = { model: "agent/reader", max_tokens: 100, tools, messages: [{ role: "user" as const, content: "" }] };

  it("runs as the gateway's web fetch: the call and its result as blocks, before what the model said after", async () => {
    const message = await claude.messages.create({ ...ask, messages: [{ role: "user", content: url("/article") }] });
    const id = (message.content[0] as { id: string }).id;
    // Anthropic's own blocks for a fetch, the page's text as a document.
    const page = { type: "document", source: { type: "text", media_type: "text/plain", data: "Field notes\n\nThe gateway fetched this page itself." }, title: "Switchyard field notes" };
    expect(message.content).toEqual([
      { type: "server_tool_use", id, name: "web_fetch", input: { url: url("/article") } },
      { type: "web_fetch_tool_result", tool_use_id: id, content: { type: "web_fetch_result", url: url("/article"), content: page, retrieved_at: expect.any(String) } },
      { type: "text", text: expect.stringContaining("Fetching. READ") },
    ]);
    expect(message.stop_reason).toBe("end_turn");

    // Streamed, the SDK accumulates the same blocks.
    const streamed = await claude.messages.stream({ ...ask, messages: [{ role: "user", content: url("/article") }] }).finalMessage();
    expect(streamed.content.map((b) => b.type)).toEqual(["text", "server_tool_use", "web_fetch_tool_result", "text"]);

    // Sent back, the blocks are history: the model reads the call and its result, and nothing is fetched again.
    const served = pages.served.length;
    const before = agent.requests.length;
    await claude.messages.create({ ...ask, messages: [{ role: "user", content: url("/article") }, { role: "assistant", content: message.content as Anthropic.ContentBlockParam[] }, { role: "user", content: "Thanks" }] });
    const history = agent.requests[before]!.messages as Message[];
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(history[1]!.tool_calls).toEqual([expect.objectContaining({ function: { name: "web_fetch", arguments: JSON.stringify({ url: url("/article") }) } })]);
    expect(pages.served.length).toBe(served);
  });

  it("refuses a setting the gateway cannot honour, naming it", async () => {
    const refused = claude.messages.create({ ...ask, tools: [{ type: "web_fetch_20250910", name: "web_fetch", citations: { enabled: true } }] as unknown as Anthropic.ToolUnion[], messages: [{ role: "user", content: "x" }] });
    await expect(refused).rejects.toMatchObject({ status: 400, error: { error: { type: "invalid_request_error", message: expect.stringContaining("tools[0].citations") } } });
  });
});
