import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeAnthropic } from "./support/fake-anthropic.js";
import type { FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, type TestGateway } from "./support/gateway.js";
import { startHostileGateway, type HostileFixture } from "./support/hostile-fixture.js";

/**
 * JSON nested far past the 64 levels the gateway reads, through the router: in a body, and as JSON text
 * inside a string (a tool call's arguments), which the gateway parses itself. Each is a short 400 that names
 * the field, given at once and before a provider is called.
 */

let fx: HostileFixture;
let gw: TestGateway;
let alpha: FakeProvider;
let claude: FakeAnthropic;
let plain: string;
let filtered: string;

beforeAll(async () => {
  fx = await startHostileGateway(["tools"]);
  ({ gw, alpha, claude, plain, filtered } = fx);
}, 240_000);
afterAll(async () => {
  await fx?.stop();
});

/** JSON text `depth` levels deep: arrays, or objects each holding the next under `a`, around `leaf`. */
const deep = (shape: "array" | "object", depth: number, leaf = "1"): string =>
  shape === "array" ? `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`;

const limit = "nested deeper than 64 levels";

/**
 * A POST of raw text, and how long the event loop of this process (which runs the whole gateway) was
 * stalled while it was answered: the longest gap between ticks of a 5 ms timer.
 */
async function post(path: string, body: string, key: string) {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    const res = await fetch(`${gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    const answer = (await res.json()) as { error?: { code: number; message: string }; choices?: unknown[] };
    return { status: res.status, body: answer, elapsed: performance.now() - started, stall: Math.max(stall, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

/** A chat body whose assistant turn made one call with `args` (JSON text), answered by a tool message. */
const withCall = (model: string, args: string) =>
  JSON.stringify({
    model,
    max_tokens: 50,
    messages: [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: args } }] },
      { role: "tool", tool_call_id: "c1", content: "done" },
    ],
  });

describe("tool call arguments nested past the limit", () => {

  it.each([
    ["array", 10_000],
    ["object", 10_000],
    ["array", 1_000_000],
    ["object", 1_000_000],
  ] as const)("are a 400 naming the field, %s nesting %i levels deep, filtered or not, on either adapter", async (shape, depth) => {
    const args = deep(shape, depth);
    const before = fx.calls();
    for (const [model, key] of [
      ["chat/ok", filtered],
      ["anthropic/text", plain],
      ["anthropic/text", filtered],
      ["chat/ok", plain],
    ] as const) {
      const res = await post("/chat/completions", withCall(model, args), key);
      expect({ model, status: res.status, error: res.body.error }).toEqual({
        model,
        status: 400,
        error: { code: 400, message: `Invalid body: messages.0.tool_calls.0.function.arguments: ${limit}` },
      });
    }
    expect(fx.calls()).toBe(before);
  }, 60_000);

  it("are refused in a Responses function_call item and in a server call sent back in reasoning_details", async () => {
    const args = deep("object", 100_000);
    const responses = JSON.stringify({
      model: "chat/ok",
      input: [
        { type: "function_call", call_id: "c1", name: "f", arguments: args },
        { type: "function_call_output", call_id: "c1", output: "done" },
      ],
    });
    const res = await post("/responses", responses, filtered);
    expect({ status: res.status, message: res.body.error?.message }).toEqual({ status: 400, message: `Invalid body: input.0.arguments: ${limit}` });

    for (const field of ["arguments", "result"] as const) {
      const detail = { type: "reasoning.server_tool_call", tool_name: "openrouter:web_search", tool_call_id: "s1", arguments: "{}", result: "{}", [field]: args };
      const chat = JSON.stringify({
        model: "chat/ok",
        messages: [
          { role: "user", content: "search" },
          { role: "assistant", content: "found it", reasoning_details: [detail] },
          { role: "user", content: "thanks" },
        ],
      });
      const answer = await post("/chat/completions", chat, filtered);
      expect({ field, status: answer.status, message: answer.body.error?.message }).toEqual({
        field,
        status: 400,
        message: `Invalid body: messages.1.reasoning_details.0.${field}: ${limit}`,
      });
    }
  });

  it("are read as ever at the limit: redacted by the filter, and sent to Anthropic as the object they hold", async () => {
    const email = "ada.lovelace@example.org";
    const res = await post("/chat/completions", withCall("chat/ok", deep("array", 64, JSON.stringify(email))), filtered);
    expect(res.status).toBe(200);
    const sent = alpha.requests.at(-1)!.body as { messages: Array<{ tool_calls?: Array<{ function: { arguments: string } }> }> };
    const args = sent.messages[0]!.tool_calls![0]!.function.arguments;
    expect(args.startsWith("[".repeat(64))).toBe(true);
    expect(args).not.toContain(email);

    const object = deep("object", 64, '"leaf"');
    expect((await post("/chat/completions", withCall("anthropic/text", object), plain)).status).toBe(200);
    const messages = claude.requests.at(-1)!.body.messages as Array<{ content: Array<{ type: string; input?: unknown }> }>;
    expect(messages[0]!.content.find((block) => block.type === "tool_use")?.input).toEqual(JSON.parse(object));
  });
});

describe("a body nested a million levels deep", () => {
  it.each([
    ["chat metadata", "/chat/completions", "metadata", "object", (): string => plain],
    ["an unknown chat field", "/chat/completions", "junk", "array", (): string => plain],
    ["key metadata", "/keys", "metadata", "object", (): string => bootstrapKey],
  ] as const)("is refused at once, without stalling the gateway: %s", async (_title, path, field, shape, key) => {
    const value = deep(shape, 1_000_000);
    const body = `{"model":"chat/ok","name":"deep","messages":[{"role":"user","content":"hi"}],"${field}":${value}}`;
    expect(body.length).toBeGreaterThan(shape === "object" ? 6_000_000 : 2_000_000);
    const res = await post(path, body, key());
    const step = shape === "object" ? "a" : "0";
    expect(res.status).toBe(400);
    expect(res.body.error?.message).toMatch(new RegExp(`^Invalid body: ${field}(\\.${step})+\\.?…: ${limit}$`));
    expect(res.elapsed).toBeLessThan(500);
    expect(res.stall).toBeLessThan(300);
  }, 60_000);
});
