import { catalogEnv } from "./catalog-fixture.js";
import { startFakeRetrieval, type FakeRetrieval } from "./fake-retrieval.js";
import { startTestGateway, type TestGateway } from "./gateway.js";

/** Prices a test can check exactly: a millionth of a dollar per token, Cohere's $0.002 per search unit. */
export const perToken = 0.000001;
export const perSearchUnit = 0.002;

const tokenPriced = { prompt: String(perToken), completion: "0" };

type Endpoint = [provider: string, upstream: string, extra?: Record<string, unknown>];

const model = (id: string, output: "embeddings" | "rerank", endpoints: Endpoint[], pricing: Record<string, string> = tokenPriced) => ({
  id,
  name: id,
  context_length: 8192,
  input_modalities: ["text"],
  output_modalities: [output],
  endpoints: endpoints.map(([provider, upstream_model, extra]) => ({ provider, upstream_model, pricing, ...extra })),
});

export interface RetrievalFixture {
  gw: TestGateway;
  fake: FakeRetrieval;
  /** An inference key without a limit. */
  key: string;
  stop(): Promise<void>;
}

/**
 * The gateway with one fake retrieval server behind a provider per wire format: `oa` (OpenAI), `gem`
 * (Gemini), `co` (Cohere), `vo` (Voyage), `ji` (OpenAI-compatible, Jina-style rerank). The upstream model
 * name picks the fake's behaviour.
 */
export async function startRetrievalFixture(): Promise<RetrievalFixture> {
  const fake = await startFakeRetrieval();
  const provider = (slug: string, adapter: string, path: string) => ({ slug, name: slug, adapter, base_url: `${fake.origin}/${path}`, api_key_env: `${slug.toUpperCase()}_KEY` });
  const dims = { supported_parameters: ["dimensions"] };
  const catalog = {
    providers: [provider("oa", "openai", "openai"), provider("gem", "google", "gemini"), provider("co", "cohere", "cohere"), provider("vo", "voyage", "voyage"), provider("ji", "openai-compatible", "jina")],
    models: [
      model("emb/small", "embeddings", [["oa", "ok", { max_inputs: 2048, ...dims }]]),
      model("emb/thousand", "embeddings", [["oa", "ok", { max_inputs: 1000 }]]),
      model("emb/short", "embeddings", [["oa", "ok", { context_length: 16 }]]),
      model("emb/nousage", "embeddings", [["oa", "no-usage"]]),
      model("emb/escaped", "embeddings", [["oa", "escaped"]]),
      model("emb/fallback", "embeddings", [["oa", "fail-500"], ["gem", "ok"]]),
      model("emb/gemini", "embeddings", [["gem", "ok", { max_inputs: 100, supported_parameters: ["dimensions", "input_type"] }]]),
      model("emb/cohere", "embeddings", [["co", "ok", { max_inputs: 96, supported_parameters: ["dimensions", "input_type"] }]]),
      model("emb/voyage", "embeddings", [["vo", "ok", { supported_parameters: ["input_type"] }]]),
      model("emb/compatible", "embeddings", [["ji", "ok", { supported_parameters: ["input_type"] }]]),
      model("emb/typed-openai", "embeddings", [["oa", "ok", { supported_parameters: ["input_type"] }]]),
      model("emb/half-token", "embeddings", [["oa", "half-token"]]),
      model("emb/huge-usage", "embeddings", [["oa", "huge-usage"], ["gem", "ok"]]),
      model("emb/ragged", "embeddings", [["oa", "ragged"]]),
      model("rr/cohere", "rerank", [["co", "ok", { max_inputs: 3 }]], { prompt: "0", completion: "0", search_unit: String(perSearchUnit) }),
      model("rr/voyage", "rerank", [["vo", "ok"]]),
      model("rr/jina", "rerank", [["ji", "ok"]]),
      model("rr/fallback", "rerank", [["ji", "fail-500"], ["vo", "ok"]]),
      model("rr/nousage", "rerank", [["ji", "no-usage"]]),
      { id: "chat/model", name: "Chat", context_length: 8000, endpoints: [{ provider: "oa", upstream_model: "ok", pricing: tokenPriced }] },
    ],
  };
  const keys = { OA_KEY: "sk-oa", GEM_KEY: "gem-secret", CO_KEY: "co-secret", VO_KEY: "vo-secret", JI_KEY: "ji-secret" };
  const gw = await startTestGateway({ ...(await catalogEnv(catalog)), ...keys });
  const key = String((await gw.call("POST", "/keys", { body: { name: "retrieval" } })).body.key);
  return {
    gw,
    fake,
    key,
    async stop() {
      await gw.stop();
      await fake.stop();
    },
  };
}

/** A new key with a spending limit, and its hash. */
export async function limitedKey(gw: TestGateway, limit: number): Promise<{ key: string; hash: string }> {
  const created = await gw.call("POST", "/keys", { body: { name: "limited", limit } });
  return { key: String(created.body.key), hash: String(created.body.data?.hash) };
}
