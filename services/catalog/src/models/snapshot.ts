import type { CatalogConfig, EndpointConfig, ModelConfig, ProviderConfig } from "../operator-config/schema.js";

/** A provider as configured, with its secret and base URL resolved from the environment. */
export interface ProviderEntry extends ProviderConfig {
  apiKey: string | undefined;
  /** Listed always; callable only with a key (or when it needs none). */
  usable: boolean;
}

/** One provider's offer of one model, with everything routing and filtering need. */
export interface EndpointEntry extends EndpointConfig {
  model: ModelEntry;
  providerEntry: ProviderEntry;
  region: string;
  zdr: boolean;
  contextLength: number;
}

export interface ModelEntry extends ModelConfig {
  /** Unix seconds; the release date when configured, else when the catalog was loaded. */
  createdAt: number;
  endpointEntries: EndpointEntry[];
}

/** The catalog in memory: rebuilt whole on reload, never mutated. */
export interface CatalogSnapshot {
  providers: ProviderEntry[];
  models: ModelEntry[];
  modelsById: Map<string, ModelEntry>;
  /**
   * `<vendor>/<upstream model>` → the model of that vendor one of whose endpoints serves that upstream model,
   * the first configured: `anthropic/claude-sonnet-4-5-20250929` names `anthropic/claude-sonnet-4.5`. Clients
   * that know models by their provider's own names (Claude Code, the Anthropic SDK) find them so.
   */
  modelsByUpstream: Map<string, ModelEntry>;
  providersBySlug: Map<string, ProviderEntry>;
  /** Hostname (lower case, no port) → region. */
  regionsByHost: Map<string, string>;
  loadedAt: number;
}

/** `<SLUG>_API_KEY` style names: upper case, anything else an underscore. */
export const envName = (slug: string, suffix: string) => `${slug.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${suffix}`;

export function buildSnapshot(config: CatalogConfig, env: Record<string, string | undefined>, now = Date.now()): CatalogSnapshot {
  const providers: ProviderEntry[] = config.providers.map((p) => {
    const apiKey = (p.api_key_env ? env[p.api_key_env] : undefined) || env[envName(p.slug, "API_KEY")] || undefined;
    const baseUrl = env[envName(p.slug, "BASE_URL")] || p.base_url;
    return { ...p, base_url: baseUrl, apiKey, usable: Boolean(apiKey) || !p.requires_api_key };
  });
  const providersBySlug = new Map(providers.map((p) => [p.slug, p]));
  const models = config.models.map((m) => {
    const model: ModelEntry = {
      ...m,
      createdAt: m.created ? Math.floor(Date.parse(`${m.created}T00:00:00Z`) / 1000) : Math.floor(now / 1000),
      endpointEntries: [],
    };
    model.endpointEntries = m.endpoints.map((e) => {
      const providerEntry = providersBySlug.get(e.provider)!;
      return {
        ...e,
        model,
        providerEntry,
        region: e.region ?? providerEntry.region,
        zdr: e.zdr ?? providerEntry.data_policy.zdr,
        contextLength: e.context_length ?? m.context_length,
      };
    });
    return model;
  });
  const regionsByHost = new Map<string, string>();
  for (const r of config.regions) for (const host of r.hosts) regionsByHost.set(host.toLowerCase(), r.region);
  const modelsById = new Map(models.map((m) => [m.id, m]));
  const modelsByUpstream = new Map<string, ModelEntry>();
  for (const m of models) {
    const vendor = m.id.slice(0, m.id.indexOf("/"));
    for (const e of m.endpointEntries) {
      const alias = `${vendor}/${e.upstream_model}`;
      if (!modelsById.has(alias) && !modelsByUpstream.has(alias)) modelsByUpstream.set(alias, m);
    }
  }
  return { providers, models, modelsById, modelsByUpstream, providersBySlug, regionsByHost, loadedAt: now };
}
