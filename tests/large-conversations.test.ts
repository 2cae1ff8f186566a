import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Coding agents' long conversations through the router, seen where the provider gets them: items the gateway
 * did not change arrive as the client wrote them (the gateway writes them from the client's own bytes), items
 * it changed (a content filter's redaction, a cache marker) arrive changed, and no request's bytes reach
 * another request's provider call, also when a fallback sends them again after other requests came in.
 */
let gw: TestGateway;
let key: string;
let first: FakeProvider;
let second: FakeProvider;
let claude: FakeAnthropic;

const free = { prompt: "0", completion: "0" };

beforeAll(async () => {
  first = await startFakeProvider("first");
  second = await startFakeProvider("second");
  claude = await startFakeAnthropic();
  const model = (id: string, endpoints: Array<{ provider: string; upstream_model: string }>) => ({
    id,
    name: id,
    context_length: 400_000,
    endpoints: endpoints.map((e) => ({ ...e, pricing: free })),
  });
  gw = await startTestGateway({
    ...(await catalogEnv({
      providers: [
        { slug: "first", name: "First", adapter: "openai-compatible", base_url: first.baseUrl, requires_api_key: false },
        { slug: "second", name: "Second", adapter: "openai-compatible", base_url: second.baseUrl, requires_api_key: false },
        { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      ],
      models: [
        model("chat/ok", [{ provider: "first", upstream_model: "ok" }]),
        model("chat/fallback", [{ provider: "first", upstream_model: "fail-500" }, { provider: "second", upstream_model: "ok" }]),
        model("anthropic/claude-sonnet-4.5", [{ provider: "claude", upstream_model: "claude-sonnet-4-5-20250929" }]),
      ],
    })),
    CLAUDE_KEY: "claude-endpoint-secret",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "agent" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await first?.stop();
  await second?.stop();
  await claude?.stop();
});

type Json = Record<string, unknown>;

/** JSON as Python's `json.dumps` writes it by default: a space after each comma and colon, non-ASCII as `\u` escapes. */
const pythonJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([name, member]) => `${JSON.stringify(name)}: ${pythonJson(member)}`).join(", ")}}`;
  }
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
};

/** About `kib` KiB of a coding agent's conversation, its first message naming `marker`. */
function conversation(marker: string, kib: number, planted = ""): Json[] {
  const code = 'export function total(lines: Line[]): number {\n  return lines.reduce((sum, l) => sum + l.cents, 0); // "café"\n}\n';
  const messages: Json[] = [{ role: "system", content: `You are a coding agent on task ${marker}.` }];
  for (let i = 0; pythonJson(messages).length < kib * 1024; i++) {
    const text = `Step ${i} of ${marker}: ${i === 3 ? planted : ""}${code.repeat(10)}`;
    messages.push(i % 2 ? { role: "assistant", content: [{ type: "text", text }] } : { role: "user", content: text });
  }
  messages.push({ role: "user", content: `Now run the tests for ${marker}.` });
  return messages;
}

const post = (path: string, key: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body });

/** The count of items before the last that `raw` holds as the client wrote them. */
const verbatim = (raw: string, messages: Json[]) => messages.slice(0, -1).filter((m) => raw.includes(pythonJson(m))).length;

describe("large conversations", () => {
  it("reach an OpenAI-compatible provider with their items as the client wrote them", async () => {
    const messages = conversation("chat-verbatim", 200);
    const res = await post("/chat/completions", key, pythonJson({ model: "chat/ok", messages, temperature: 0.5 }));
    expect(res.status).toBe(200);
    const sent = first.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: "ok", messages, temperature: 0.5 });
    expect(verbatim(sent.raw, messages)).toBe(messages.length - 1);
  });

  it("reach the provider redacted where a content filter redacted them, the rest as written", async () => {
    const filtered = String((await gw.call("POST", "/keys", { body: { name: "filtered" } })).body.key);
    const hash = String((await gw.call("GET", "/key", { key: filtered })).body.data?.hash);
    const guardrail = await gw.call("POST", "/guardrails", { body: { name: "no emails", content_filter_builtins: [{ slug: "email", action: "redact" }] } });
    const id = String(guardrail.body.data?.id);
    expect((await gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [hash] } })).status).toBe(200);

    const messages = conversation("chat-redacted", 200, "write to ada.lovelace@example.org when done. ");
    const res = await post("/chat/completions", filtered, pythonJson({ model: "chat/ok", messages }));
    expect(res.status).toBe(200);
    const sent = first.requests.at(-1)!;
    expect(sent.raw).not.toContain("ada.lovelace@example.org");
    expect(JSON.stringify(sent.body.messages)).toContain("write to [EMAIL] when done");
    // The items written anew are those the gateway read with it, in one piece of at most 60 KB.
    const anew = messages.slice(0, -1).filter((m) => !sent.raw.includes(pythonJson(m)));
    expect(anew.length).toBeGreaterThan(0);
    expect(pythonJson(anew).length).toBeLessThanOrEqual(60 * 1024);

    // A member named twice: the gateway reads the last, which has no address; the provider gets no other.
    const twice = pythonJson({ model: "chat/ok", messages: conversation("chat-twice", 200) }).replace(
      '{"role": "user", "content": "Step 2 of',
      '{"role": "user", "content": "write to ada.lovelace@example.org", "content": "Step 2 of',
    );
    expect((await post("/chat/completions", filtered, twice)).status).toBe(200);
    expect(first.requests.at(-1)!.raw).not.toContain("ada.lovelace@example.org");
  });

  it("never carry one request's bytes into another's provider call, also when a fallback sends them again", async () => {
    const markers = ["first-task", "second-task", "third-task", "fourth-task"];
    const conversations = new Map(markers.map((marker) => [marker, conversation(marker, 150)]));
    const before = { first: first.requests.length, second: second.requests.length };
    const answers = await Promise.all(
      markers.map((marker) => post("/chat/completions", key, pythonJson({ model: "chat/fallback", messages: conversations.get(marker), provider: { order: ["first", "second"] } }))),
    );
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    const failed = first.requests.slice(before.first);
    const answered = second.requests.slice(before.second);
    // The fallback answered every request; some went to the failing endpoint first (until its failures
    // moved it last), and were sent again after other requests had come in.
    expect(answered).toHaveLength(markers.length);
    expect(failed.length).toBeGreaterThan(0);
    const sent = [...failed, ...answered];
    for (const request of sent) {
      const marker = markers.find((m) => request.raw.includes(`task ${m}.`))!;
      expect(request.body.messages).toEqual(conversations.get(marker));
      for (const other of markers.filter((m) => m !== marker)) expect(request.raw).not.toContain(other);
    }
  });

  it("reach Anthropic as Claude Code wrote them, with a top-level cache marker only on the last block", async () => {
    const messages = conversation("messages-verbatim", 200).filter((m) => m.role !== "system");
    const body = { model: "anthropic/claude-sonnet-4.5", max_tokens: 1024, system: "You are Claude Code.", messages, cache_control: { type: "ephemeral" } };
    const res = await post("/messages", key, pythonJson(body), { "anthropic-version": "2023-06-01" });
    expect(res.status).toBe(200);
    const sent = claude.requests.at(-1)!;
    const last = messages.at(-1)!;
    expect(sent.body.messages).toEqual([...messages.slice(0, -1), { ...last, content: [{ type: "text", text: last.content, cache_control: { type: "ephemeral" } }] }]);
    expect(verbatim(sent.raw, messages)).toBe(messages.length - 1);
  });
});
