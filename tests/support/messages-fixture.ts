import Anthropic from "@anthropic-ai/sdk";
import { createServer } from "node:http";
import { catalogEnv } from "./catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./fake-provider.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { listenLocal } from "./listen.js";

/** Anthropic's published Sonnet prices per token: input, output, cache read (0.1×) and cache write (1.25×). */
export const pricing = { prompt: "0.000003", completion: "0.000015", input_cache_read: "0.0000003", input_cache_write: "0.00000375" };
const supported = ["max_tokens", "temperature", "top_p", "top_k", "stop", "tools", "tool_choice", "reasoning"];

const model = (id: string, provider: string, upstream: string, maxOutput = 8192) => ({
  id,
  name: id,
  context_length: 200000,
  input_modalities: ["text", "image", "file"],
  endpoints: [{ provider, upstream_model: upstream, pricing, max_completion_tokens: maxOutput, supported_parameters: supported }],
});

/** The key the gateway holds for the fake Anthropic endpoint; clients never send it. */
export const endpointKey = "claude-endpoint-secret";

/** What the refusing OpenAI-compatible endpoint says instead of an answer. */
export const refusalText = "I'm sorry, I can't help with that.";

/**
 * An OpenAI-compatible endpoint that declines every request as OpenAI's models do: `message.refusal` with no
 * content and `finish_reason: "stop"`, or streamed, the refusal in two `delta.refusal` pieces.
 */
async function startRefusingChat() {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { model: string; stream?: boolean };
      const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
      const frame = { id: "up-refusal", created: 1, model: body.model };
      if (!body.stream) {
        const choice = { index: 0, message: { role: "assistant", content: null, refusal: refusalText }, finish_reason: "stop" };
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...frame, object: "chat.completion", choices: [choice], usage }));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const cut = Math.ceil(refusalText.length / 2);
      const deltas = [{ role: "assistant", content: null, refusal: refusalText.slice(0, cut) }, { refusal: refusalText.slice(cut) }];
      for (const delta of deltas) res.write(`data: ${JSON.stringify({ ...frame, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...frame, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  return listenLocal(server);
}

export interface MessagesFixture {
  gw: TestGateway;
  claude: FakeAnthropic;
  /** An OpenAI-compatible endpoint (`openai/compat`), which count_tokens never calls. */
  compat: FakeProvider;
  key: string;
  /** The Anthropic SDK on the gateway as its users configure it: base URL `<gateway>/api`, the key in `x-api-key`. */
  client: Anthropic;
  stop(): Promise<void>;
}

/**
 * The gateway with a fake Anthropic endpoint (provider `claude`, adapter `anthropic`) serving one catalog model
 * per behaviour of the fake, OpenAI-compatible endpoints that answer (`openai/compat`), reject with 400
 * (`openai/rejects`) and refuse (`openai/refuses`), and the two models Claude Code asks for by Anthropic's own names:
 * `anthropic/claude-sonnet-4.5` (upstream `claude-sonnet-4-5-20250929`) and `anthropic/claude-3.5-haiku`
 * (upstream `claude-3-5-haiku-20241022`).
 */
export async function startMessagesGateway(): Promise<MessagesFixture> {
  const claude = await startFakeAnthropic();
  const compat = await startFakeProvider("compat");
  const refuser = await startRefusingChat();
  const catalog = {
    providers: [
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
      { slug: "compat", name: "Compat", adapter: "openai-compatible", base_url: compat.baseUrl, requires_api_key: false },
      { slug: "refuser", name: "Refuser", adapter: "openai-compatible", base_url: refuser.baseUrl, requires_api_key: false },
    ],
    models: [
      model("anthropic/text", "claude", "text"),
      model("anthropic/tools", "claude", "tools-thinking"),
      model("anthropic/mid-error", "claude", "mid-error"),
      model("anthropic/image", "claude", "image"),
      model("anthropic/stop", "claude", "stop"),
      model("anthropic/window-full", "claude", "window-full"),
      model("anthropic/slow", "claude", "slow"),
      model("anthropic/overloaded", "claude", "overloaded"),
      model("anthropic/claude-sonnet-4.5", "claude", "claude-sonnet-4-5-20250929", 64000),
      model("anthropic/claude-3.5-haiku", "claude", "claude-3-5-haiku-20241022"),
      model("anthropic/too-long", "claude", "too-long"),
      model("anthropic/late-too-long", "claude", "late-too-long"),
      model("anthropic/cited", "claude", "cited"),
      model("anthropic/interleaved", "claude", "interleaved"),
      model("openai/compat", "compat", "ok"),
      model("openai/rejects", "compat", "bad-request"),
      model("openai/refuses", "refuser", "refusal"),
    ],
  };
  const gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: endpointKey });
  const key = String((await gw.call("POST", "/keys", { body: { name: "messages" } })).body.key);
  const client = new Anthropic({ apiKey: key, baseURL: `${gw.baseUrl}/api`, maxRetries: 0 });
  return {
    gw,
    claude,
    compat,
    key,
    client,
    async stop() {
      await gw.stop();
      await claude.stop();
      await compat.stop();
      await refuser.stop();
    },
  };
}
