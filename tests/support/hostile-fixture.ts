import { catalogEnv } from "./catalog-fixture.js";
import { startFakeAnthropic, type FakeAnthropic } from "./fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./fake-provider.js";
import { startTestGateway, type TestGateway } from "./gateway.js";

/** A gateway for hostile bodies, its two providers and two keys: `filtered` has an email-redacting guardrail, `plain` none. */
export interface HostileFixture {
  gw: TestGateway;
  alpha: FakeProvider;
  claude: FakeAnthropic;
  plain: string;
  filtered: string;
  /** Requests either provider received. */
  calls(): number;
  stop(): Promise<void>;
}

/**
 * Free models on an OpenAI-compatible endpoint (`chat/ok`, taking `chatParameters`) and an Anthropic one
 * (`anthropic/text`), with bodies of up to 16 MiB accepted.
 */
export async function startHostileGateway(chatParameters: string[]): Promise<HostileFixture> {
  const alpha = await startFakeProvider("alpha");
  const claude = await startFakeAnthropic();
  const free = { prompt: "0", completion: "0" };
  const catalog = {
    providers: [
      { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: alpha.baseUrl, requires_api_key: false },
      { slug: "claude", name: "Claude", adapter: "anthropic", base_url: claude.baseUrl, api_key_env: "CLAUDE_KEY" },
    ],
    models: [
      { id: "chat/ok", name: "ok", context_length: 1_000_000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: free, supported_parameters: chatParameters }] },
      { id: "anthropic/text", name: "text", context_length: 1_000_000, endpoints: [{ provider: "claude", upstream_model: "text", pricing: free, supported_parameters: ["tools", "max_tokens"] }] },
    ],
  };
  const gw = await startTestGateway({ ...(await catalogEnv(catalog)), CLAUDE_KEY: "claude-secret", MAX_BODY_BYTES: String(16 * 1024 * 1024) });
  const plain = String((await gw.call("POST", "/keys", { body: { name: "plain" } })).body.key);
  const created = await gw.call("POST", "/keys", { body: { name: "filtered" } });
  const guardrail = await gw.call("POST", "/guardrails", { body: { name: "email redact", content_filter_builtins: [{ slug: "email", action: "redact" }] } });
  const assigned = await gw.call("POST", `/guardrails/${String(guardrail.body.data?.id)}/assignments/keys`, { body: { key_hashes: [created.body.data?.hash] } });
  if (assigned.status !== 200) throw new Error(`assigning the guardrail answered ${assigned.status}`);
  return {
    gw,
    alpha,
    claude,
    plain,
    filtered: String(created.body.key),
    calls: () => alpha.requests.length + claude.requests.length,
    async stop() {
      await gw.stop();
      await alpha.stop();
      await claude.stop();
    },
  };
}
