import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A small operator catalog whose every property a test can reason about: alpha and beta have keys,
 * gamma has none (listed, never usable), local needs none. beta trains on data and is in Europe.
 */
export const fixtureCatalog = {
  providers: [
    { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: "http://127.0.0.1:9/v1", api_key_env: "ALPHA_KEY", region: "us" },
    {
      slug: "beta",
      name: "Beta",
      adapter: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      region: "europe",
      data_policy: { training: true, retains_prompts: true, zdr: false },
    },
    { slug: "gamma", name: "Gamma", adapter: "openai-compatible", base_url: "http://127.0.0.1:9/v1" },
    {
      slug: "local",
      name: "Local",
      adapter: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      requires_api_key: false,
      region: "us",
      data_policy: { training: false, retains_prompts: false, zdr: true },
    },
  ],
  models: [
    {
      id: "vendor/a",
      name: "A",
      context_length: 8000,
      created: "2025-01-01",
      endpoints: [
        { provider: "alpha", upstream_model: "a", pricing: { prompt: "0.000002", completion: "0.000004" }, supported_parameters: ["temperature", "tools", "tool_choice"] },
        { provider: "beta", upstream_model: "a-beta", pricing: { prompt: "0.000001", completion: "0.000002" }, supported_parameters: ["temperature"] },
      ],
    },
    { id: "vendor/b", name: "B", context_length: 4000, endpoints: [{ provider: "beta", upstream_model: "b", pricing: { prompt: "0.000001", completion: "0.000001" } }] },
    { id: "vendor/c", name: "C", context_length: 4000, endpoints: [{ provider: "gamma", upstream_model: "c", pricing: { prompt: "0.000001", completion: "0.000001" } }] },
    {
      id: "vendor/img",
      name: "Image",
      context_length: 1000,
      input_modalities: ["text"],
      output_modalities: ["image"],
      endpoints: [{ provider: "alpha", upstream_model: "img", pricing: { prompt: "0", completion: "0", image: "0.04" } }],
    },
    {
      id: "openai/x",
      name: "X",
      context_length: 16000,
      endpoints: [
        { provider: "alpha", upstream_model: "x", pricing: { prompt: "0.000003", completion: "0.000006" } },
        { provider: "local", upstream_model: "x-local", pricing: { prompt: "0", completion: "0" } },
      ],
    },
  ],
  regions: [{ region: "europe", hosts: ["eu.localhost"] }],
};

/** Writes the fixture (or another catalog) to a file and returns the environment that loads it. */
export async function catalogEnv(catalog: object = fixtureCatalog): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), "switchyard-catalog-"));
  const path = join(dir, "catalog.json");
  await writeFile(path, JSON.stringify(catalog));
  return { SWITCHYARD_CONFIG: path, ALPHA_KEY: "alpha-secret", BETA_API_KEY: "beta-secret" };
}

/** An image model served by one provider (a fake media provider's `ok` behaviour) at $0.04 an image. */
export const imageModel = (id: string, provider: string) => ({
  id,
  name: "image",
  context_length: 8000,
  input_modalities: ["text"],
  output_modalities: ["image"],
  endpoints: [{ provider, upstream_model: "ok", pricing: { prompt: "0", completion: "0", image_output: "0.04" } }],
});
