import { join } from "node:path";
import OpenAI from "openai";
import { catalogEnv } from "./catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./fake-provider.js";
import { startFakeResponses, type FakeResponses } from "./fake-responses.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { startReplayProvider, type Answer, type ReplayProvider } from "./replay-provider.js";

/** A gateway in front of one fake per wire a Responses request may reach: OpenAI-compatible, OpenAI's Responses, Anthropic, Gemini. */
export interface ResponsesFixture {
  gw: TestGateway;
  key: string;
  openai: OpenAI;
  compat: FakeProvider;
  responses: FakeResponses;
  claude: ReplayProvider;
  gemini: ReplayProvider;
  stop(): Promise<void>;
}

/** The recorded answer files of a replayed provider, by upstream model, buffered and streamed. */
export interface Replies {
  buffered: Record<string, Answer>;
  streamed: Record<string, Answer>;
}

const fixtures = join(import.meta.dirname, "..", "fixtures");
const pricing = { prompt: "0.000002", completion: "0.000008" };

/**
 * Starts the fakes and a gateway whose catalog has `models` (`[id, provider slug, upstream model]`, provider
 * slugs `compat`, `openai`, `claude`, `gemini`), and a key named `name`.
 */
export async function startResponsesGateway(name: string, models: Array<[string, string, string]>, replies: { claude: Replies; gemini: Replies }): Promise<ResponsesFixture> {
  const compat = await startFakeProvider("compat");
  const responses = await startFakeResponses();
  const claude = await startReplayProvider(join(fixtures, "anthropic"), (req) => (req.body.stream ? replies.claude.streamed : replies.claude.buffered)[String(req.body.model)]!);
  const gemini = await startReplayProvider(join(fixtures, "google"), (req) => {
    const [, model, method] = /\/models\/([^:]+):(\w+)/.exec(req.path) ?? [];
    return (method === "streamGenerateContent" ? replies.gemini.streamed : replies.gemini.buffered)[model ?? ""]!;
  });
  const provider = (slug: string, adapter: string, baseUrl: string) => ({ slug, name: slug, adapter, base_url: baseUrl, requires_api_key: false });
  const catalog = {
    providers: [provider("compat", "openai-compatible", compat.baseUrl), provider("openai", "openai", responses.baseUrl), provider("claude", "anthropic", claude.baseUrl), provider("gemini", "google", gemini.baseUrl)],
    models: models.map(([id, slug, upstream]) => ({ id, name: id, context_length: 200000, input_modalities: ["text", "image"], endpoints: [{ provider: slug, upstream_model: upstream, pricing, max_completion_tokens: 8192 }] })),
  };
  const gw = await startTestGateway(await catalogEnv(catalog));
  const key = String((await gw.call("POST", "/keys", { body: { name } })).body.key);
  return {
    gw,
    key,
    openai: new OpenAI({ apiKey: key, baseURL: gw.apiUrl }),
    compat,
    responses,
    claude,
    gemini,
    async stop() {
      await gw.stop();
      await Promise.all([compat.stop(), responses.stop(), claude.stop(), gemini.stop()]);
    },
  };
}
