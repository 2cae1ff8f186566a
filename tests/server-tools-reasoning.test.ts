import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeThinking, type FakeThinking } from "./support/fake-thinking.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

let gw: TestGateway;
let fake: FakeThinking;
let key: string;

const adapters = { anthropic: "anthropic", google: "google", compatible: "openai-compatible" } as const;
type Kind = keyof typeof adapters;

beforeAll(async () => {
  fake = await startFakeThinking();
  const catalog = {
    providers: Object.entries(adapters).map(([slug, adapter]) => ({ slug, name: slug, adapter, base_url: fake.baseUrl, api_key_env: "THINKING_KEY" })),
    models: Object.keys(adapters).map((slug) => ({
      id: `thinking/${slug}`,
      name: slug,
      context_length: 100000,
      endpoints: [
        {
          provider: slug,
          upstream_model: `${slug}-thinker`,
          pricing: { prompt: "0.000001", completion: "0.000002" },
          max_completion_tokens: 8192,
          supported_parameters: ["tools", "tool_choice", "reasoning", "max_tokens"],
        },
      ],
    })),
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), THINKING_KEY: "thinking-secret" });
  key = String((await gw.call("POST", "/keys", { body: { name: "thinking" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await fake?.stop();
});

type Detail = { type: string; index?: number; text?: string; signature?: string; data?: string; tool_name?: string; result?: string; tool_call_id?: string; arguments?: string };
type Message = { role: string; content: string | null; reasoning?: string; reasoning_details?: Detail[] };

const ask = (kind: Kind, stream: boolean, messages: unknown[] = [{ role: "user", content: "What time is it?" }], extra: Record<string, unknown> = {}) =>
  fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: `thinking/${kind}`, stream, messages, tools: [{ type: "openrouter:datetime" }], reasoning: { effort: "high" }, max_tokens: 4000, ...extra }),
  });

/** What a client makes of a stream: the words, and reasoning entries joined by index as the SDK's users do. */
async function readStream(res: Response) {
  const frames = (await res.text()).split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>);
  let content = "";
  let reasoning = "";
  const byIndex = new Map<number, Detail>();
  for (const frame of frames) {
    expect(frame.error).toBeUndefined();
    for (const choice of frame.choices as Array<{ delta: { content?: string; reasoning?: string; reasoning_details?: Detail[] } }>) {
      content += choice.delta.content ?? "";
      reasoning += choice.delta.reasoning ?? "";
      for (const d of choice.delta.reasoning_details ?? []) {
        const same = byIndex.get(d.index!);
        if (!same) byIndex.set(d.index!, { ...d });
        else for (const k of ["text", "signature", "data"] as const) if (d[k]) same[k] = (same[k] ?? "") + d[k];
      }
    }
  }
  const details = [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, d]) => d);
  return { message: { role: "assistant", content, reasoning, reasoning_details: details } as Message, usage: frames.at(-1)!.usage as Record<string, unknown> };
}

async function answer(kind: Kind, stream: boolean, messages?: unknown[]) {
  const res = await ask(kind, stream, messages);
  expect(res.status).toBe(200);
  if (stream) return readStream(res);
  const body = (await res.json()) as { choices: Array<{ message: Message }>; usage: Record<string, unknown> };
  return { message: body.choices[0]!.message, usage: body.usage };
}

/** The reasoning each fake gives in its first turn, as the client should see it whole. */
const firstThinking: Record<Kind, Partial<Detail>> = {
  anthropic: { type: "reasoning.text", text: "The user wants the time. I should ask the clock.", signature: "EqQBCkYIBxgCKkBsig-anthropic-1" },
  google: { type: "reasoning.encrypted", data: "CiQB0e2Kb-gemini-signature" },
  compatible: { type: "reasoning.text", text: "Time matters here; ask the clock.", signature: "sig-openai-compatible-1" },
};

describe.each([false, true])("a thinking model across the turns of the agent loop (stream: %s)", (stream) => {
  it.each(Object.keys(adapters) as Kind[])("%s: sends each turn's reasoning back with its tool call, and shows the client every turn's", async (kind) => {
    const before = { requests: fake.requests.length, refusals: fake.refusals.length };
    const { message, usage } = await answer(kind, stream);
    expect(fake.refusals.slice(before.refusals)).toEqual([]);
    expect(fake.requests.length - before.requests).toBe(2);
    expect(message.content).toBe("It is noon.");
    expect(usage.server_tool_use_details).toEqual({ tool_calls_requested: 1, tool_calls_executed: 1 });
    const details = message.reasoning_details!;
    // Every entry has an index of its own: the turns' entries never join into one.
    expect(new Set(details.map((d) => d.index)).size).toBe(details.length);
    const call = details.findIndex((d) => d.type === "reasoning.server_tool_call");
    expect(details[0]).toMatchObject(firstThinking[kind]);
    expect(details[call]).toMatchObject({ tool_name: "openrouter:datetime", arguments: "{}" });
    expect(JSON.parse(details[call]!.result!)).toHaveProperty("datetime");
    // The last turn's reasoning comes after the call, and the first turn's before it.
    expect(call).toBeGreaterThan(0);
    if (kind !== "google") expect(details.slice(call + 1)).toEqual([expect.objectContaining({ type: "reasoning.text", text: kind === "anthropic" ? "The clock answered." : "Now answer." })]);
    if (kind !== "google") expect(message.reasoning).toContain(firstThinking[kind].text);
  });

  it.each(Object.keys(adapters) as Kind[])("%s: replays the answer's calls, reasoning included, when the client sends the conversation back", async (kind) => {
    const { message } = await answer(kind, stream);
    const before = { requests: fake.requests.length, refusals: fake.refusals.length };
    const follow = await answer(kind, stream, [{ role: "user", content: "What time is it?" }, message, { role: "user", content: "Thanks. And now?" }]);
    // The thinking model accepted the replayed call, so its signed reasoning came back with it; nothing ran again.
    expect(fake.refusals.slice(before.refusals)).toEqual([]);
    expect(fake.requests.length - before.requests).toBe(1);
    expect(follow.usage.server_tool_use_details).toEqual({ tool_calls_requested: 0, tool_calls_executed: 0 });
  });
});

describe("a replayed conversation as the provider sees it", () => {
  it("becomes the call, its result and the answer's words, in order", async () => {
    const { message } = await answer("compatible", false);
    const call = message.reasoning_details!.find((d) => d.type === "reasoning.server_tool_call")!;
    await answer("compatible", false, [{ role: "user", content: "What time is it?" }, message, { role: "user", content: "Thanks" }]);
    const sent = fake.requests.at(-1)!.body.messages as Array<Record<string, unknown>>;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(sent[1]).toMatchObject({ content: null, tool_calls: [{ id: call.tool_call_id, type: "function", function: { name: "datetime", arguments: "{}" } }] });
    expect((sent[1]!.reasoning_details as Detail[]).map((d) => d.type)).toEqual(["reasoning.text", "reasoning.encrypted"]);
    expect(sent[2]).toEqual({ role: "tool", tool_call_id: call.tool_call_id, content: call.result });
    expect(sent[3]).toMatchObject({ content: "It is noon.", reasoning_details: [expect.objectContaining({ text: "Now answer." })] });
    expect(JSON.stringify(sent)).not.toContain("reasoning.server_tool_call");
  });
});

describe.each([false, true])("reasoning hidden from the answer (stream: %s)", (stream) => {
  const hidden = [
    ["reasoning.exclude", { reasoning: { effort: "high", exclude: true } }],
    ["include_reasoning: false", { include_reasoning: false }],
  ] as const;
  it.each((Object.keys(adapters) as Kind[]).flatMap((kind) => hidden.map(([how, extra]) => [kind, how, extra] as const)))(
    "%s, %s: the answer shows none, the provider still gets each turn's reasoning back",
    async (kind, _how, extra) => {
      const before = fake.refusals.length;
      const res = await ask(kind, stream, undefined, extra);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(fake.refusals.slice(before)).toEqual([]);
      expect(text).toContain("It is noon.");
      expect(text).not.toMatch(/"reasoning(_details|_content)?":/);
      // The reasoning was produced and is paid for (Anthropic's usage does not count it apart).
      if (kind !== "anthropic") expect(text).toMatch(/"reasoning_tokens":[1-9]/);
    },
  );
});
