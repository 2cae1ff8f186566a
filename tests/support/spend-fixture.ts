/** Models with prices that make spend easy to reason about, all served by one fake provider. */
export function spendCatalog(baseUrl: string) {
  const model = (id: string, upstream: string, pricing: Record<string, string>) => ({
    id,
    name: id,
    context_length: 8000,
    endpoints: [{ provider: "alpha", upstream_model: upstream, pricing: { prompt: "0", completion: "0", ...pricing } }],
  });
  return {
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: baseUrl, requires_api_key: false }],
    models: [
      // A flat price per request: the worst case is exactly the charge.
      model("spend/cent", "cent", { request: "0.01" }),
      model("spend/ninety-cents", "ok", { request: "0.9" }),
      model("spend/per-token", "ok", { completion: "0.00001" }),
      model("spend/tokens", "ok", { prompt: "0.000001", completion: "0.000002" }),
      model("spend/no-usage", "no-usage", { prompt: "0.000001", completion: "0.000002" }),
      model("spend/failing", "fail-500", { request: "0.01" }),
      // Answers nothing until the caller gives up: a request in flight, for as long as a test needs.
      model("spend/stalling", "stall", { request: "0.01" }),
    ],
  };
}
