import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentCommand, runAgent } from "./support/agent-cli.js";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeChat, type FakeChat } from "./support/fake-chat-script.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * Codex itself (`@openai/codex`, which `.ci/run` installs from the npm registry) pointed at the gateway as its
 * users point it: a model provider in `config.toml` with the gateway's `/api/v1` as its base URL and the
 * Responses wire, its default tools included (its sub-agent tools in a `namespace`, and `web_search`, served
 * by the gateway's search backend). One headless turn (`codex exec`) on a model served by OpenAI's Responses
 * API, where the model calls one of Codex's tools and Codex sends the result back, and one on a model served
 * by an OpenAI-compatible Chat Completions endpoint.
 */

const codex = agentCommand("codex");
const said = "Hello from the chat model.";
let gw: TestGateway;
let responses: FakeResponses;
let chat: FakeChat;
let search: { stop(): Promise<void> };
let key: string;

beforeAll(async () => {
  if (!codex) return;
  responses = await startFakeResponses();
  chat = await startFakeChat(() => ({ content: said }));
  const searchServer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results: [{ title: "Docs", url: "https://docs.switchyard.dev/a", content: "a" }] }));
  });
  const listening = await listenLocal(searchServer);
  search = listening;
  const provider = (slug: string, adapter: string, baseUrl: string) => ({ slug, name: slug, adapter, base_url: baseUrl, requires_api_key: false });
  const pricing = { prompt: "0.000002", completion: "0.000008" };
  const model = (id: string, slug: string, upstream: string) => ({ id, name: id, context_length: 200000, endpoints: [{ provider: slug, upstream_model: upstream, pricing, max_completion_tokens: 8192 }] });
  const catalog = {
    providers: [provider("openai", "openai", responses.baseUrl), provider("open", "openai-compatible", chat.baseUrl)],
    models: [model("openai/codex-model", "openai", "text"), model("vendor/chat-model", "open", "text")],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), WEB_SEARCH_URL: listening.baseUrl.replace(/\/v1$/, "") });
  key = String((await gw.call("POST", "/keys", { body: { name: "codex" } })).body.key);
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await Promise.all([responses?.stop(), chat?.stop(), search?.stop()]);
});

/** `codex exec` of one prompt on `model`, configured as docs/dialects.md tells users to. */
async function exec(model: string) {
  const config = [
    `model = "${model}"`,
    `model_provider = "switchyard"`,
    `[model_providers.switchyard]`,
    `name = "Switchyard"`,
    `base_url = "${gw.apiUrl}"`,
    `env_key = "SWITCHYARD_API_KEY"`,
    `wire_api = "responses"`,
  ].join("\n");
  const prepare = async (home: string) => {
    await mkdir(join(home, ".codex"));
    await writeFile(join(home, ".codex", "config.toml"), `${config}\n`);
  };
  const run = await runAgent(codex!, ["exec", "--skip-git-repo-check", "Say hello"], { SWITCHYARD_API_KEY: key }, prepare);
  return run;
}

describe.skipIf(!codex)("Codex through the gateway", () => {
  it("runs a turn with a tool call on OpenAI's Responses API", async () => {
    const before = responses.requests.length;
    const run = await exec("openai/codex-model");
    expect(run.status, run.stderr).toBe(0);
    // The fake model calls Codex's first tool; Codex answers it and the model reads the answer.
    expect(run.stdout).toContain("The tool answered:");
    const sent = responses.requests.slice(before).map((r) => r.body);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ model: "text", stream: true, client_metadata: { session_id: expect.stringMatching(/./) } });
    const types = (sent[1]!.input as Array<{ type: string }>).map((item) => item.type);
    expect(types).toEqual(expect.arrayContaining(["function_call", "function_call_output"]));
  });

  it("answers on an OpenAI-compatible Chat Completions endpoint", async () => {
    const before = chat.requests.length;
    const run = await exec("vendor/chat-model");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(said);
    expect(chat.requests.length - before).toBe(1);
  });
});
