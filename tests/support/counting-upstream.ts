import { createServer } from "node:http";
import { catalogEnv } from "./catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { listenLocal } from "./listen.js";
import { recorded } from "./media-fixture.js";

/** A chat body's messages, as a counting provider reads them. */
export type ChatMessages = { messages?: Array<{ content?: unknown }> };

/** The first content part of `type` in a chat body's messages. */
export function firstPart<T>(body: ChatMessages, type: string): T | undefined {
  for (const message of body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    const part = (message.content as Array<{ type?: string }>).find((p) => p.type === type);
    if (part) return part as T;
  }
  return undefined;
}

export interface CountingGateway {
  gw: TestGateway;
  /** Requests the provider received. */
  calls(): number;
  /** An inference key, with a spend limit when given. */
  newKey(limit?: number): Promise<string>;
  /** A generation as `GET /generation` shows it, once recorded. */
  generation(id: string, key: string): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/**
 * The gateway in front of one model (`model`, upstream `upstream`) of an OpenAI-compatible provider that bills
 * by what it reads: each answer reports `promptTokens(body)` prompt tokens and `completionTokens` completion
 * tokens, at `pricing`.
 */
export async function startCountingGateway(options: {
  model: string;
  inputModalities: string[];
  pricing: { prompt: number; completion: number };
  promptTokens: (body: ChatMessages) => number;
  completionTokens: number;
}): Promise<CountingGateway> {
  let calls = 0;
  const upstream = options.model.split("/")[1]!;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls++;
      const prompt = options.promptTokens(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatMessages);
      const usage = { prompt_tokens: prompt, completion_tokens: options.completionTokens, total_tokens: prompt + options.completionTokens };
      const choice = { index: 0, message: { role: "assistant", content: "Read." }, finish_reason: "stop" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: upstream, choices: [choice], usage }));
    });
  });
  const listening = await listenLocal(server);
  const pricing = { prompt: String(options.pricing.prompt), completion: String(options.pricing.completion) };
  const catalog = {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: listening.baseUrl, requires_api_key: false }],
    models: [{ id: options.model, name: upstream, context_length: 1_000_000, input_modalities: options.inputModalities, endpoints: [{ provider: "alpha", upstream_model: upstream, pricing }] }],
  };
  const gw = await startTestGateway(await catalogEnv(catalog));
  return {
    gw,
    calls: () => calls,
    newKey: async (limit) => String((await gw.call("POST", "/keys", { body: { name: "counted", ...(limit === undefined ? {} : { limit }) } })).body.key),
    generation: async (id, key) => (await recorded(gw, key, id)) as Record<string, number>,
    async stop() {
      await gw.stop();
      await listening.stop();
    },
  };
}
