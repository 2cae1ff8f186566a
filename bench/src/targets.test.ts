import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCatalog } from "@switchyard/catalog";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directTarget, embeddingModel, switchyardRoutes, writeCatalog } from "./targets.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-bench-test-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the benchmark's catalog", () => {
  it("is one the catalog service loads, with an embedding model on the openai-compatible provider", async () => {
    const path = await writeCatalog(dir, "http://127.0.0.1:1/v1");
    const catalog = await loadCatalog(path);
    expect(catalog.models.map((m) => m.id)).toEqual(["bench/model", "bench/anthropic", "bench/embedding"]);
    const model = catalog.models.find((m) => m.id === embeddingModel)!;
    expect(model).toMatchObject({ context_length: 8192, input_modalities: ["text"], output_modalities: ["embeddings"] });
    expect(model.endpoints).toHaveLength(1);
    expect(model.endpoints[0]).toMatchObject({ provider: "bench", upstream_model: "bench", max_inputs: 2048, pricing: { prompt: "0.00000002", completion: "0" } });
    expect(catalog.providers.find((p) => p.slug === "bench")).toMatchObject({ adapter: "openai-compatible", base_url: "http://127.0.0.1:1/v1", requires_api_key: false });
    const written = JSON.parse(await readFile(path, "utf8")) as { models: Array<{ id: string; endpoints: Array<{ pricing: object }> }> };
    expect(written.models.find((m) => m.id === embeddingModel)!.endpoints[0]!.pricing).toEqual({ prompt: "0.00000002", completion: "0" });
  });
});

describe("where embeddings are sent", () => {
  it("sends Switchyard's to /api/v1/embeddings on bench/embedding and direct calls to the upstream's /v1/embeddings", () => {
    expect(switchyardRoutes.embeddings).toEqual({ path: "/api/v1/embeddings", model: "bench/embedding" });
    const direct = directTarget({ url: "http://127.0.0.1:4000/v1", pid: 1 });
    expect(direct.origin).toBe("http://127.0.0.1:4000");
    expect(direct.routes.embeddings).toEqual({ path: "/v1/embeddings", model: "bench" });
  });
});
