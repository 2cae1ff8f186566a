import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { agentCatalog, startFakeAgent, toolResults, type FakeAgent, type Script } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * The web search tool's settings: every field `@openrouter/sdk` sends for it is taken, and a setting is either
 * applied or refused with a 400 that names it, before a provider is called.
 */
let gw: TestGateway;
let agent: FakeAgent;
let search: { stop(): Promise<void> };
let key: string;
const queries: string[] = [];

/** Searches once, then reports the results it read. */
const searcher: Script = (body) =>
  toolResults(body.messages).length ? { content: `RESULTS ${JSON.stringify(toolResults(body.messages))}` } : { calls: [{ name: "web_search", arguments: { query: "switchyard" } }] };

beforeAll(async () => {
  agent = await startFakeAgent({ searcher });
  const server = createServer((req, res) => {
    queries.push(new URL(req.url ?? "/", "http://localhost").searchParams.get("q") ?? "");
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        results: [
          { title: "Docs", url: "https://docs.switchyard.dev/tools", content: "Server tools run in the gateway." },
          { title: "Elsewhere", url: "https://example.com/page", content: "Other site" },
        ],
      }),
    );
  });
  const listening = await listenLocal(server);
  search = listening;
  gw = await startTestGateway({
    ...(await catalogEnv(agentCatalog(agent, ["searcher"], { supportedParameters: ["tools", "tool_choice"] }))),
    WEB_SEARCH_URL: listening.baseUrl.replace(/\/v1$/, ""),
    FAKE_AGENT_KEY: "agent-secret",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "searcher" } })).body.key);
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await agent?.stop();
  await search?.stop();
});

const searchWith = async (tool: Record<string, unknown>) => {
  const before = agent.requests.length;
  const res = await gw.call("POST", "/chat/completions", { key, body: { model: "agent/searcher", messages: [{ role: "user", content: "Go" }], tools: [tool] } });
  return { status: res.status, message: res.body.error?.message, turns: agent.requests.length - before, body: res.body };
};

describe("web search settings", () => {
  it.each([
    ["a misspelt key in parameters", { type: "openrouter:web_search", parameters: { max_result: 3 } }, "tools.0.parameters.max_result: unknown field"],
    ["a misspelt key at the shorthand's top level", { type: "web_search", allowed_domain: ["switchyard.dev"] }, "tools.0.allowed_domain: unknown field"],
    ["a misspelt key in filters", { type: "web_search_preview", filters: { allow_domains: ["switchyard.dev"] } }, "tools.0.filters.allow_domains: unknown field"],
    ["filters inside parameters", { type: "openrouter:web_search", parameters: { filters: { allowed_domains: ["switchyard.dev"] } } }, "tools.0.parameters.filters: unknown field"],
    ["parameters that are not an object", { type: "openrouter:web_search", parameters: ["max_results"] }, "tools.0.parameters: must be an object"],
    ["filters that are not an object", { type: "web_search_2025_08_26", filters: "switchyard.dev" }, "tools.0.filters: must be an object"],
    ["external_web_access that is not a boolean", { type: "web_search", external_web_access: "no" }, "tools.0.external_web_access: must be a boolean"],
  ])("refuses %s with a 400 naming it", async (_name, tool, message) => {
    const { status, message: said, turns } = await searchWith(tool);
    expect({ status, turns }).toEqual({ status: 400, turns: 0 });
    expect(said).toContain(message);
  });

  it.each([
    ["another search engine", { type: "openrouter:web_search", parameters: { engine: "exa" } }, "tools.0.parameters.engine"],
    ["a context size other than the default", { type: "web_search_preview", search_context_size: "high" }, "tools.0.search_context_size"],
    ["a user location", { type: "web_search", user_location: { type: "approximate", country: "DE", city: "Berlin" } }, "tools.0.user_location"],
    ["a search mode other than auto", { type: "openrouter:web_search", parameters: { mode: "deep" } }, "tools.0.parameters.mode"],
    ["X search options", { type: "openrouter:web_search", parameters: { x_search: { allowed_x_handles: ["openrouter"] } } }, "tools.0.parameters.x_search"],
  ])("refuses %s, which the operator's backend cannot apply", async (_name, tool, field) => {
    const { status, message, turns } = await searchWith(tool);
    expect({ status, turns }).toEqual({ status: 400, turns: 0 });
    expect(message).toMatch(new RegExp(`^Invalid body: ${field.replace(/\./g, "\\.")}: `));
  });

  it("takes every field the SDK sends, where it asks for what the gateway does", async () => {
    const settings = {
      allowed_domains: ["switchyard.dev"],
      engine: "auto",
      max_characters: 10,
      max_results: 3,
      max_total_results: 10,
      max_uses: 2,
      mode: "auto",
      search_context_size: "medium",
      user_location: null,
      x_search: null,
    };
    const tools = [
      { type: "openrouter:web_search", parameters: settings },
      { type: "web_search", ...settings, parameters: settings },
      { type: "web_search_2025_08_26", engine: "auto", max_results: 3, max_uses: 2, mode: "auto", search_context_size: "medium", user_location: null, filters: { allowed_domains: ["switchyard.dev"], excluded_domains: null, blocked_domains: null } },
      { type: "web_search_preview", engine: null, search_context_size: null, user_location: null, filters: null },
      // As Codex declares it (OpenAI's cached mode); live access allowed is the same search.
      { type: "web_search", external_web_access: false },
      { type: "web_search", external_web_access: true },
      // As a tool declared on /messages comes: its name and cache marker say what it is, not how it searches.
      { type: "openrouter:web_search", name: "web_search", cache_control: { type: "ephemeral" }, parameters: { max_results: 3 } },
    ];
    for (const tool of tools) {
      const { status, body } = await searchWith(tool);
      expect(status, JSON.stringify(body)).toBe(200);
    }
    // The settings still apply: only the allowed domain, each excerpt cut to ten characters.
    const { body } = await searchWith({ type: "openrouter:web_search", parameters: settings });
    const content = String((body.choices as unknown as Array<{ message: { content: string } }>)[0]!.message.content);
    const results = (JSON.parse(content.replace(/^RESULTS /, "")) as Array<{ results: Array<{ url: string; snippet: string }> }>)[0]!.results;
    expect(results).toEqual([{ title: "Docs", url: "https://docs.switchyard.dev/tools", snippet: "Server too" }]);
  });
});
