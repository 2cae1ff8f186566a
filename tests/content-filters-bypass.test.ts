import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startMessagesGateway, type MessagesFixture } from "./support/messages-fixture.js";

/**
 * Text that reaches a provider by a side road: server tool calls sent back in reasoning_details or as
 * Responses items, reasoning, refusals, predicted output, document titles and contexts, token counting.
 * The guardrails' filters must read each: redacted where the provider gets it, 403 with no provider call
 * under `block`.
 */
let fx: MessagesFixture;

beforeAll(async () => {
  fx = await startMessagesGateway();
});
afterAll(async () => {
  await fx?.stop();
});

const email = "ada.lovelace@example.org";

/** A new inference key under one guardrail whose `email` builtin takes `action`. */
async function keyFor(action: "redact" | "block" | "flag"): Promise<{ key: string; id: string }> {
  const created = await fx.gw.call("POST", "/keys", { body: { name: `email ${action}` } });
  const guardrail = await fx.gw.call("POST", "/guardrails", { body: { name: `email ${action}`, content_filter_builtins: [{ slug: "email", action }] } });
  const id = String(guardrail.body.data?.id);
  expect((await fx.gw.call("POST", `/guardrails/${id}/assignments/keys`, { body: { key_hashes: [String(created.body.data?.hash)] } })).status).toBe(200);
  return { key: String(created.body.key), id };
}

/** Posts a body; a streamed answer is read to its end, so the upstream call is over when this returns. */
async function post(path: string, key: string, body: Record<string, unknown>) {
  const res = await fetch(`${fx.gw.apiUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text };
}

/** What the generation of `id` records of the filters' findings. */
async function contentFilters(id: string, key: string): Promise<unknown> {
  const read = () => fx.gw.call("GET", `/generation?id=${id}`, { key });
  await eventually(async () => (await read()).status === 200, 5000);
  return (await read()).body.data?.content_filters;
}

const compatRaw = () => fx.compat.requests.at(-1)!.raw;
const claudeRaw = () => fx.claude.requests.at(-1)!.raw;

/** Expects `send` to be refused with 403 naming the guardrail, and neither fake to have been called. */
async function expectBlocked(send: () => Promise<{ status: number; text: string }>, guardrailId: string) {
  const before = fx.compat.requests.length + fx.claude.requests.length;
  const res = await send();
  expect(res.status, res.text).toBe(403);
  expect(res.text).toContain(guardrailId);
  expect(res.text).not.toContain(email);
  expect(fx.compat.requests.length + fx.claude.requests.length).toBe(before);
}

const replayedChat = (stream: boolean) => ({
  model: "openai/compat",
  stream,
  tools: [{ type: "openrouter:datetime" }],
  messages: [
    { role: "user", content: "time?" },
    {
      role: "assistant",
      content: "It is noon.",
      reasoning_details: [
        { type: "reasoning.server_tool_call", tool_name: "openrouter:datetime", tool_call_id: "call_x", arguments: JSON.stringify({ who: email }), result: JSON.stringify({ note: `told ${email}` }) },
      ],
    },
    { role: "user", content: "thanks" },
  ],
});

const replayedResponses = {
  model: "openai/compat",
  tools: [{ type: "openrouter:datetime" }],
  input: [
    { type: "message", role: "user", content: "time?" },
    { type: "openrouter:datetime", call_id: "call_y", arguments: JSON.stringify({ who: email }), datetime: `noon for ${email}` },
    { type: "message", role: "assistant", content: "It is noon." },
    { type: "message", role: "user", content: "thanks" },
  ],
};

describe("server tool calls sent back", () => {
  it("redacts a replayed call's arguments and result on chat, buffered and streamed, keeping them JSON", async () => {
    const { key } = await keyFor("redact");
    for (const stream of [false, true]) {
      const res = await post("/chat/completions", key, replayedChat(stream));
      expect(res.status, res.text).toBe(200);
      const sent = fx.compat.requests.at(-1)!.body as { messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ function: { arguments: string } }> }> };
      expect(compatRaw()).not.toContain(email);
      const call = sent.messages.find((m) => m.tool_calls?.length)!;
      expect(JSON.parse(call.tool_calls![0]!.function.arguments)).toEqual({ who: "[EMAIL]" });
      expect(JSON.parse(String(sent.messages.find((m) => m.role === "tool")!.content))).toEqual({ note: "told [EMAIL]" });
      if (!stream) expect(await contentFilters(JSON.parse(res.text).id, key)).toEqual([expect.objectContaining({ filter: "email", action: "redact", count: 2 })]);
    }
  });

  it("redacts a replayed Responses item's arguments and result", async () => {
    const { key } = await keyFor("redact");
    const res = await post("/responses", key, replayedResponses);
    expect(res.status, res.text).toBe(200);
    expect(compatRaw()).not.toContain(email);
    expect(compatRaw()).toContain("[EMAIL]");
  });

  it("blocks a replayed call with 403 before the provider is called, on chat and Responses", async () => {
    const { key, id } = await keyFor("block");
    await expectBlocked(() => post("/chat/completions", key, replayedChat(false)), id);
    await expectBlocked(() => post("/chat/completions", key, replayedChat(true)), id);
    await expectBlocked(() => post("/responses", key, replayedResponses), id);
  });
});

describe("refusals, predicted output and reasoning sent back", () => {
  const refused = { role: "assistant", content: null, refusal: `I will not write to ${email}.` };
  const predicted = { type: "content", content: `Dear ${email},` };

  it("redacts an assistant refusal and the predicted output on chat", async () => {
    const { key } = await keyFor("redact");
    const res = await post("/chat/completions", key, {
      model: "openai/compat",
      prediction: predicted,
      messages: [{ role: "user", content: "write" }, refused, { role: "user", content: "please" }],
    });
    expect(res.status, res.text).toBe(200);
    const sent = fx.compat.requests.at(-1)!.body as { messages: Array<{ refusal?: string }>; prediction: { content: string } };
    expect(sent.messages[1]!.refusal).toBe("I will not write to [EMAIL].");
    expect(sent.prediction.content).toBe("Dear [EMAIL],");
  });

  it("redacts a refusal part of a Responses assistant message", async () => {
    const { key } = await keyFor("redact");
    const res = await post("/responses", key, {
      model: "openai/compat",
      input: [
        { type: "message", role: "user", content: "write" },
        { type: "message", role: "assistant", content: [{ type: "refusal", refusal: `I will not write to ${email}.` }] },
        { type: "message", role: "user", content: "please" },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(compatRaw()).not.toContain(email);
    expect(compatRaw()).toContain("I will not write to [EMAIL].");
  });

  it("blocks a refusal and the predicted output under block", async () => {
    const { key, id } = await keyFor("block");
    await expectBlocked(() => post("/chat/completions", key, { model: "openai/compat", messages: [{ role: "user", content: "write" }, refused, { role: "user", content: "please" }] }), id);
    await expectBlocked(() => post("/chat/completions", key, { model: "openai/compat", prediction: predicted, messages: [{ role: "user", content: "write" }] }), id);
    await expectBlocked(
      () =>
        post("/responses", key, {
          model: "openai/compat",
          input: [{ type: "message", role: "assistant", content: [{ type: "refusal", refusal: `not ${email}` }] }, { type: "message", role: "user", content: "please" }],
        }),
      id,
    );
  });

  it("refuses reasoning text with a match even under redact: signed reasoning cannot be edited", async () => {
    const { key, id } = await keyFor("redact");
    const thought = `The user is ${email}.`;
    const sentBack = [
      { role: "assistant", content: "Hi.", reasoning: thought },
      { role: "assistant", content: "Hi.", reasoning_details: [{ type: "reasoning.text", text: thought, signature: "sig", format: "anthropic-claude-v1" }] },
      { role: "assistant", content: "Hi.", reasoning_details: [{ type: "reasoning.summary", summary: thought, format: "openai-responses-v1" }] },
    ];
    for (const assistant of sentBack) {
      await expectBlocked(() => post("/chat/completions", key, { model: "openai/compat", messages: [{ role: "user", content: "hello" }, assistant, { role: "user", content: "again" }] }), id);
    }
    await expectBlocked(
      () =>
        post("/responses", key, {
          model: "openai/compat",
          input: [
            { type: "message", role: "user", content: "hello" },
            { type: "reasoning", summary: [{ type: "summary_text", text: thought }] },
            { type: "message", role: "assistant", content: "Hi." },
            { type: "message", role: "user", content: "again" },
          ],
        }),
      id,
    );
    await expectBlocked(
      () =>
        post("/messages", key, {
          model: "anthropic/text",
          max_tokens: 50,
          messages: [
            { role: "user", content: "hello" },
            { role: "assistant", content: [{ type: "thinking", thinking: thought, signature: "sig" }, { type: "text", text: "Hi." }] },
            { role: "user", content: "again" },
          ],
        }),
      id,
    );
  });

  it("passes reasoning with a flagged match unchanged", async () => {
    const { key } = await keyFor("flag");
    const res = await post("/chat/completions", key, { model: "openai/compat", messages: [{ role: "user", content: "hello" }, { role: "assistant", content: "Hi.", reasoning: `about ${email}` }, { role: "user", content: "again" }] });
    expect(res.status, res.text).toBe(200);
    expect(compatRaw()).toContain(`about ${email}`);
  });
});

describe("/messages to an Anthropic endpoint", () => {
  const documentAsk = (extra: Record<string, unknown>) => ({
    model: "anthropic/text",
    max_tokens: 50,
    messages: [{ role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "The grass is green." }, ...extra }, { type: "text", text: "summarise" }] }],
  });

  it("redacts a document's context and title in what Anthropic receives", async () => {
    const { key } = await keyFor("redact");
    for (const extra of [{ context: `from ${email}` }, { title: `sent by ${email}` }]) {
      const res = await post("/messages", key, documentAsk(extra));
      expect(res.status, res.text).toBe(200);
      expect(claudeRaw()).not.toContain(email);
      expect(claudeRaw()).toContain("[EMAIL]");
      expect(claudeRaw()).toContain("The grass is green.");
    }
    const pdf = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" }, title: `Report for ${email}`, context: `from ${email}` };
    const res = await post("/messages", key, { model: "anthropic/text", max_tokens: 50, messages: [{ role: "user", content: [pdf, { type: "text", text: "summarise" }] }] });
    expect(res.status, res.text).toBe(200);
    expect(claudeRaw()).not.toContain(email);
    expect(fx.claude.requests.at(-1)!.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "from [EMAIL]" },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQK" }, title: "Report for [EMAIL]" },
          { type: "text", text: "summarise" },
        ],
      },
    ]);
  });

  it("blocks a document's context and title with 403", async () => {
    const { key, id } = await keyFor("block");
    await expectBlocked(() => post("/messages", key, documentAsk({ context: `from ${email}` })), id);
    await expectBlocked(() => post("/messages", key, documentAsk({ title: `sent by ${email}` })), id);
  });

  it("never sends the unredacted prompt to count_tokens", async () => {
    const { key } = await keyFor("redact");
    const before = fx.claude.requests.length;
    const res = await post("/messages/count_tokens", key, { model: "anthropic/text", messages: [{ role: "user", content: `mail ${email} please` }] });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ input_tokens: expect.any(Number), estimated: true });
    for (const request of fx.claude.requests.slice(before)) expect(request.raw).not.toContain(email);
  });
});
