import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

/** How the fake answers a request for one upstream model name. */
export type Behavior =
  | "ok"
  | "no-usage"
  | "over-usage"
  | "fail-500"
  | "reset"
  | "rate-limited"
  | "bad-request"
  | "cut"
  | "stall"
  | "silent-stream"
  | "stall-after-first"
  | "slow"
  | "drip"
  | "malformed-json";

export interface FakeProvider {
  baseUrl: string;
  /** Bodies and headers of every request received, in order. */
  requests: Array<{ body: Record<string, unknown>; authorization: string | undefined }>;
  /** Requests whose client went away before the answer ended (aborts reaching upstream). */
  aborted: number;
  stop(): Promise<void>;
}

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 } };
/** What `over-usage` reports whatever `max_tokens` allowed: a provider that bills more than it may produce. */
export const overUsage = { prompt_tokens: 12, completion_tokens: 2000, total_tokens: 2012 };

/**
 * An OpenAI-compatible provider on 127.0.0.1: the upstream model name picks the behaviour, so one fake can
 * succeed, report more completion tokens than it was allowed, fail with 500 or 429 + Retry-After, reset the
 * connection, cut a stream after two chunks, pause a stream for 4 s after its first chunk, or stall until the caller
 * aborts: before any answer (`stall`), after a stream's headers (`silent-stream`), or after a stream's first chunk
 * (`stall-after-first`).
 */
export async function startFakeProvider(name: string, behaviorOf: (model: string) => Behavior = (m) => m as Behavior): Promise<FakeProvider> {
  const fake: FakeProvider = { baseUrl: "", requests: [], aborted: 0, stop: async () => {} };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    fake.requests.push({ body, authorization: req.headers.authorization });
    res.on("close", () => {
      if (!res.writableFinished) fake.aborted++;
    });
    // A key with "revoked" in it is refused as a provider refuses a bad key: 401, quoting the key.
    if (req.headers.authorization?.includes("revoked")) {
      return void res.writeHead(401).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${req.headers.authorization.slice(7)}` } }));
    }
    const behavior = behaviorOf(String(body.model));
    if (behavior === "fail-500") return void res.writeHead(500).end(JSON.stringify({ error: { message: "upstream exploded" } }));
    if (behavior === "reset") return void req.socket.destroy(); // the connection drops before any answer
    if (behavior === "rate-limited") return void res.writeHead(429, { "retry-after": "30" }).end(JSON.stringify({ error: { message: "slow down" } }));
    if (behavior === "bad-request") return void res.writeHead(400).end(JSON.stringify({ error: { message: "context too long" } }));
    if (behavior === "stall") return; // answers nothing until the caller gives up
    if (behavior === "slow") await new Promise((resolve) => setTimeout(resolve, 2300)); // thinks a while before its first byte
    const content = behavior === "malformed-json" ? '```json\n{"answer": 42, "items": [1, 2,],}\n```' : `Hello from ${name}`;
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `up-${fake.requests.length}`,
          object: "chat.completion",
          created: 1,
          model: body.model,
          system_fingerprint: "fp_fake",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
          ...(behavior === "no-usage" ? {} : { usage: behavior === "over-usage" ? overUsage : usage }),
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (behavior === "silent-stream") return void res.flushHeaders();
    const frame = (choices: unknown[], extra: object = {}) =>
      `data: ${JSON.stringify({ id: "up-stream", object: "chat.completion.chunk", created: 1, model: body.model, choices, ...extra })}\n\n`;
    res.write(frame([{ index: 0, delta: { role: "assistant", content: "Hello " } }]));
    if (behavior === "stall-after-first") return;
    // A stream that stays open a while after its first words, for faults in the middle of a stream.
    if (behavior === "drip") await new Promise((resolve) => setTimeout(resolve, 4000));
    if (res.destroyed) return;
    res.write(frame([{ index: 0, delta: { content: `from ${name}` } }]));
    if (behavior === "cut") {
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.write(frame([{ index: 0, delta: {}, finish_reason: "stop" }]));
    const wantsUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
    if (wantsUsage && behavior !== "no-usage") res.write(frame([], { usage: behavior === "over-usage" ? overUsage : usage }));
    res.end("data: [DONE]\n\n");
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}
