import { createServer } from "node:http";
import { listenLocal } from "./listen.js";

/** How one upstream model of the paced fake answers: its first token after `firstTokenMs`, then `tokensPerSecond`. */
export interface Pace {
  firstTokenMs: number;
  tokensPerSecond: number;
  tokens: number;
  /** Answers 500 instead while true. */
  failing?: boolean;
}

export interface PacedProvider {
  baseUrl: string;
  /** The upstream model of every request received, in order. */
  calls: string[];
  stop(): Promise<void>;
}

const pause = (until: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, until - performance.now())));

/**
 * An OpenAI-compatible provider on 127.0.0.1 with a known speed per upstream model: each token is a chunk
 * of its own, sent on a schedule (first after `firstTokenMs`, then one every 1/`tokensPerSecond`) kept
 * against the clock, so a late timer does not slow the rest. Usage counts the tokens sent. A buffered
 * request gets the whole answer once the schedule's last token is due.
 */
export async function startPacedProvider(paces: Record<string, Pace>): Promise<PacedProvider> {
  const provider: PacedProvider = { baseUrl: "", calls: [], stop: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; stream?: boolean };
    provider.calls.push(body.model);
    const pace = paces[body.model];
    if (!pace) return void res.writeHead(404).end(JSON.stringify({ error: { message: `no model ${body.model}` } }));
    if (pace.failing) return void res.writeHead(500).end(JSON.stringify({ error: { message: "upstream exploded" } }));
    const started = performance.now();
    const due = (i: number) => started + pace.firstTokenMs + (i * 1000) / pace.tokensPerSecond;
    const usage = { prompt_tokens: 10, completion_tokens: pace.tokens, total_tokens: 10 + pace.tokens };
    if (!body.stream) {
      await pause(due(pace.tokens - 1));
      res.writeHead(200, { "content-type": "application/json" });
      const message = { role: "assistant", content: "t ".repeat(pace.tokens).trim() };
      return void res.end(JSON.stringify({ id: "paced", object: "chat.completion", created: 1, model: body.model, choices: [{ index: 0, finish_reason: "stop", message }], usage }));
    }
    const frame = (payload: object) => `data: ${JSON.stringify({ id: "paced", object: "chat.completion.chunk", created: 1, model: body.model, ...payload })}\n\n`;
    await pause(due(0));
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < pace.tokens; i++) {
      await pause(due(i));
      if (res.destroyed) return;
      res.write(frame({ choices: [{ index: 0, delta: i === 0 ? { role: "assistant", content: "t" } : { content: " t" } }] }));
    }
    res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
    res.write(frame({ choices: [], usage }));
    res.end("data: [DONE]\n\n");
  });
  Object.assign(provider, await listenLocal(server));
  return provider;
}

const provider = (slug: string, baseUrl: string) => ({ slug, name: slug, adapter: "openai-compatible", base_url: baseUrl, requires_api_key: false });
const endpoint = (slug: string, price: string) => ({ provider: slug, upstream_model: slug, pricing: { prompt: price, completion: price } });
/**
 * Two models on the paced fake: `paced/m` on fast (dear) and slow (cheap); `paced/flap` on cheap, a hundred
 * times cheaper than dear, so the default order sends it nearly every request while it is up.
 */
export const pacedCatalog = (baseUrl: string) => ({
  providers: ["fast", "slow", "cheap", "dear"].map((slug) => provider(slug, baseUrl)),
  models: [
    { id: "paced/m", name: "Paced", context_length: 8000, endpoints: [endpoint("fast", "0.00001"), endpoint("slow", "0.000001")] },
    { id: "paced/flap", name: "Flap", context_length: 8000, endpoints: [endpoint("cheap", "0.0000001"), endpoint("dear", "0.00001")] },
  ],
});
