import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Tool definitions and response schemas are prompt text: providers render them for the model. The guardrails'
 * filters read them as they read messages: descriptions redacted, values the client reads back (enums,
 * defaults, examples, tool settings) refused under redact, names kept, and 403 under block with no provider call.
 */
let gw: TestGateway;
let compat: FakeProvider;
let claude: FakeAnthropic;

const pricing = { prompt: "0.000001", completion: "0.000002" };
const model = (id: string, provider: string, upstream: string) => ({
  id,
  name: id,
  context_length: 100000,
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: 1000, supported_parameters: ["max_tokens", "tools", "tool_choice", "response_format", "structured_outputs"] }],
});

beforeAll(async () => {
  compat = await startFakeProvider("compat");
  claude = await startFakeAnthropic();
  const catalog = {
    providers: [
      { slug: "compat", name: "Compat", adapter: "openai-compatible", base_url: compat.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
    ],
    models: [model("openai/compat", "compat", "ok"), model("anthropic/text", "claude", "text")],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret" });
});
afterAll(async () => {
  await gw?.stop();
  await compat?.stop();
  await claude?.stop();
});

const email = "ada.lovelace@example.org";

/** A new inference key under one guardrail whose `email` builtin takes `action`. */
async function keyFor(action: "redact" | "block"): Promise<{ key: string; id: string }> {
  const created = await gw.call("POST", "/keys", { body: { name: `email ${action}` } });
  const guardrail = await gw.call("POST", "/guardrails", { body: { name: `email ${action}`, content_filter_builtins: [{ slug: "email", action }] } });
  const id = String(guardrail.body.data?.id);
  expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [String(created.body.data?.hash)] } })).status).toBe(200);
  return { key: String(created.body.key), id };
}

async function post(path: string, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

const mailTool = (description: string, recipient: Record<string, unknown> = { type: "string", description: `Who gets it, e.g. ${email}` }) => ({
  type: "function",
  function: {
    name: "send_mail",
    description,
    parameters: { type: "object", properties: { recipient, body: { type: "string", title: `Text for ${email}` } }, required: ["recipient"] },
  },
});

const schemaFormat = (schema: Record<string, unknown>) => ({ type: "json_schema", json_schema: { name: "letter", description: `A letter to ${email}`, strict: true, schema } });

const sent = () => compat.requests.at(-1)!;

describe("tools and response schemas on chat", () => {
  it("redacts tool and schema descriptions and titles, keeping names and structure", async () => {
    const { key } = await keyFor("redact");
    const res = await post("/chat/completions", key, {
      model: "openai/compat",
      messages: [{ role: "user", content: "write" }],
      tools: [mailTool(`Mails ${email} or others`)],
      response_format: schemaFormat({ type: "object", properties: { to: { type: "string", description: `Usually ${email}` } } }),
    });
    expect(res.status, res.text).toBe(200);
    expect(sent().raw).not.toContain(email);
    const body = sent().body as { tools: Array<{ function: { name: string; description: string; parameters: unknown } }>; response_format: { json_schema: unknown } };
    const fn = body.tools[0]!.function;
    expect(fn.name).toBe("send_mail");
    expect(fn.description).toBe("Mails [EMAIL] or others");
    expect(fn.parameters).toEqual({
      type: "object",
      properties: { recipient: { type: "string", description: "Who gets it, e.g. [EMAIL]" }, body: { type: "string", title: "Text for [EMAIL]" } },
      required: ["recipient"],
    });
    expect(body.response_format.json_schema).toEqual({
      name: "letter",
      description: "A letter to [EMAIL]",
      strict: true,
      schema: { type: "object", properties: { to: { type: "string", description: "Usually [EMAIL]" } } },
    });
    const id = JSON.parse(res.text).id as string;
    const record = async () => (await gw.call("GET", `/generation?id=${id}`, { key })).body.data?.content_filters;
    await expect.poll(record, { timeout: 5000 }).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 5 })]);
  });

  it("refuses a match in an enum value or a default under redact: the client reads them back", async () => {
    const { key, id } = await keyFor("redact");
    const before = compat.requests.length;
    for (const recipient of [{ type: "string", enum: [email, "other"] }, { type: "string", default: email }]) {
      const res = await post("/chat/completions", key, { model: "openai/compat", messages: [{ role: "user", content: "write" }], tools: [mailTool("Mails someone", recipient)] });
      expect(res.status, res.text).toBe(403);
      expect(res.text).toContain(id);
    }
    expect(compat.requests.length).toBe(before);
  });

  it("blocks a tool description and a response schema with 403 before the provider is called", async () => {
    const { key, id } = await keyFor("block");
    const before = compat.requests.length;
    const asks = [
      { tools: [mailTool(`Mails ${email}`)] },
      { response_format: schemaFormat({ type: "object" }) },
    ];
    for (const ask of asks) {
      const res = await post("/chat/completions", key, { model: "openai/compat", messages: [{ role: "user", content: "write" }], ...ask });
      expect(res.status, res.text).toBe(403);
      expect(res.text).toContain(id);
      expect(res.text).not.toContain(email);
    }
    expect(compat.requests.length).toBe(before);
  });
});

describe("tools on /messages", () => {
  it("redacts a tool's description and input schema in what Anthropic receives", async () => {
    const { key } = await keyFor("redact");
    const res = await post("/messages", key, {
      model: "anthropic/text",
      max_tokens: 50,
      messages: [{ role: "user", content: "write" }],
      tools: [{ name: "send_mail", description: `Mails ${email}`, input_schema: { type: "object", properties: { to: { type: "string", description: `e.g. ${email}` } } } }],
    });
    expect(res.status, res.text).toBe(200);
    const raw = claude.requests.at(-1)!.raw;
    expect(raw).not.toContain(email);
    const tools = (claude.requests.at(-1)!.body as { tools: Array<Record<string, unknown>> }).tools;
    expect(tools).toEqual([{ name: "send_mail", description: "Mails [EMAIL]", input_schema: { type: "object", properties: { to: { type: "string", description: "e.g. [EMAIL]" } } } }]);
  });
});
