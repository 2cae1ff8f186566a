import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
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
  /** Bodies (parsed, and as they came), paths and headers of every request received, in order. */
  requests: Array<{ body: Record<string, unknown>; raw: string; path: string; authorization: string | undefined; headers: IncomingHttpHeaders }>;
  /** Requests whose client went away before the answer ended (aborts reaching upstream). */
  aborted: number;
  stop(): Promise<void>;
}

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, prompt_tokens_details: { cached_tokens: 2 } };
/** What `over-usage` reports whatever `max_tokens` allowed: a provider that bills more than it may produce. */
export const overUsage = { prompt_tokens: 12, completion_tokens: 2000, total_tokens: 2012 };

/** Legacy logprobs for one piece of text, as a `/completions` route sends them when asked. */
const legacyLogprobs = (text: string, offset: number) => ({ tokens: [text], token_logprobs: [-0.25], top_logprobs: [{ [text]: -0.25 }], text_offset: [offset] });

/**
 * An OpenAI-compatible provider on 127.0.0.1: the upstream model name picks the behaviour, so one fake can
 * succeed, report more completion tokens than it was allowed, fail with 500 or 429 + Retry-After, reset the
 * connection, cut a stream after two chunks, pause a stream for 4 s after its first chunk, or stall until the caller
 * aborts: before an answer (`stall`), after a stream's headers (`silent-stream`), or after a stream's first chunk
 * (`stall-after-first`).
 *
 * A path ending in `/completions` but not `/chat/completions` is the legacy text completions route: the same
 * behaviours and usage, answered as `text_completion` objects, with the prompt prepended when `echo` is set
 * and a logprobs entry per piece of text when `logprobs` is.
 */
export async function startFakeProvider(name: string, behaviorOf: (model: string) => Behavior = (m) => m as Behavior): Promise<FakeProvider> {
  const fake: FakeProvider = { baseUrl: "", requests: [], aborted: 0, stop: async () => {} };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "").split("?")[0]!;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // Recorded, so that a test sees what was sent; answered as a provider answers a body it cannot read.
      fake.requests.push({ body: {}, raw, path, authorization: req.headers.authorization, headers: req.headers });
      return void res.writeHead(400).end(JSON.stringify({ error: { message: "We could not parse the JSON body of your request." } }));
    }
    fake.requests.push({ body, raw, path, authorization: req.headers.authorization, headers: req.headers });
    const legacy = path.endsWith("/completions") && !path.endsWith("/chat/completions");
    const echoed = legacy && body.echo === true ? String(body.prompt) : "";
    const logprobs = (text: string, offset: number) => (legacy && typeof body.logprobs === "number" ? legacyLogprobs(text, offset) : null);
    res.on("close", () => {
      if (!res.writableFinished) fake.aborted++;
    });
    // A key with "revoked" in it is refused as a provider refuses a bad key: 401, quoting the key.
    if (req.headers.authorization?.includes("revoked")) {
      return void res.writeHead(401).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${req.headers.authorization.slice(7)}` } }));
    }
    const behavior = behaviorOf(String(body.model));
    if (behavior === "fail-500") return void res.writeHead(500).end(JSON.stringify({ error: { message: "upstream exploded" } }));
    if (behavior === "reset") return void req.socket.destroy(); // the connection drops before an answer
    if (behavior === "rate-limited") return void res.writeHead(429, { "retry-after": "30" }).end(JSON.stringify({ error: { message: "slow down" } }));
    if (behavior === "bad-request") return void res.writeHead(400).end(JSON.stringify({ error: { message: "context too long" } }));
    if (behavior === "stall") return; // answers nothing until the caller gives up
    if (behavior === "slow") await new Promise((resolve) => setTimeout(resolve, 2300)); // thinks a while before its first byte
    const content = behavior === "malformed-json" ? '```json\n{"answer": 42, "items": [1, 2,],}\n```' : `Hello from ${name}`;
    if (!body.stream) {
      const choice = legacy
        ? { index: 0, text: echoed + content, logprobs: logprobs(echoed + content, 0), finish_reason: "stop" }
        : { index: 0, finish_reason: "stop", message: { role: "assistant", content } };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `up-${fake.requests.length}`,
          object: legacy ? "text_completion" : "chat.completion",
          created: 1,
          model: body.model,
          system_fingerprint: "fp_fake",
          choices: [choice],
          ...(behavior === "no-usage" ? {} : { usage: behavior === "over-usage" ? overUsage : usage }),
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (behavior === "silent-stream") return void res.flushHeaders();
    const frame = (choices: unknown[], extra: object = {}) =>
      `data: ${JSON.stringify({ id: "up-stream", object: legacy ? "text_completion" : "chat.completion.chunk", created: 1, model: body.model, choices, ...extra })}\n\n`;
    /** One piece of the answer's text as a choice of either shape; the legacy route's echo opens its first. */
    const piece = (text: string, first: boolean) => {
      const said = first ? echoed + text : text;
      if (legacy) return { index: 0, text: said, logprobs: logprobs(said, first ? 0 : echoed.length + "Hello ".length), finish_reason: null };
      return { index: 0, delta: first ? { role: "assistant", content: text } : { content: text } };
    };
    res.write(frame([piece("Hello ", true)]));
    if (behavior === "stall-after-first") return;
    // A stream that stays open a while after its first words, for faults in the middle of a stream.
    if (behavior === "drip") await new Promise((resolve) => setTimeout(resolve, 4000));
    if (res.destroyed) return;
    res.write(frame([piece(`from ${name}`, false)]));
    if (behavior === "cut") {
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.write(frame([legacy ? { index: 0, text: "", logprobs: null, finish_reason: "stop" } : { index: 0, delta: {}, finish_reason: "stop" }]));
    const wantsUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
    if (wantsUsage && behavior !== "no-usage") res.write(frame([], { usage: behavior === "over-usage" ? overUsage : usage }));
    res.end("data: [DONE]\n\n");
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}
