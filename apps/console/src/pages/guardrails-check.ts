import type { Call } from "../api.js";

/** The providers' slugs and the models' ids the gateway has, as its own lists give them. */
export interface Known {
  providers: Set<string>;
  models: Set<string>;
}

export interface GuardrailLists {
  allowedProviders: string[] | null;
  ignoredProviders: string[] | null;
  allowedModels: string[] | null;
  ignoredModels: string[] | null;
}

/** The lists a guardrail's names are checked against; null when they could not be read, so nothing is checked against them. */
export async function loadKnown(call: Call): Promise<Known | null> {
  try {
    const [providers, models] = await Promise.all([
      call<{ data: { slug: string }[] }>("/providers"),
      call<{ data: { id: string }[] }>("/models", { query: { output_modalities: "all" } }),
    ]);
    return { providers: new Set(providers.data.map((p) => p.slug)), models: new Set(models.data.map((m) => m.id)) };
  } catch {
    return null;
  }
}

/** A model id names a catalog model, or the base id of variants (`vendor/model` covers `vendor/model:free`). */
const isModel = (id: string, known: Set<string>) => known.has(id) || [...known].some((m) => m.startsWith(`${id}:`));

/**
 * Why the gateway would store these lists but never apply them as meant, or null: a name it does not have
 * matches nothing, and one both allowed and ignored is never used.
 */
export function listProblem(lists: GuardrailLists, known: Known | null): string | null {
  if (known) {
    const checks: [string, string[] | null, (name: string) => boolean, string][] = [
      ["Allowed providers", lists.allowedProviders, (p) => known.providers.has(p), "provider"],
      ["Ignored providers", lists.ignoredProviders, (p) => known.providers.has(p), "provider"],
      ["Allowed models", lists.allowedModels, (m) => isModel(m, known.models), "model"],
      ["Ignored models", lists.ignoredModels, (m) => isModel(m, known.models), "model"],
    ];
    for (const [field, list, has, kind] of checks) {
      const missing = (list ?? []).find((name) => !has(name));
      if (missing !== undefined) return `${field}: “${missing}” is not a ${kind} of this gateway.`;
    }
  }
  const both = (allowed: string[] | null, ignored: string[] | null) => (allowed ?? []).find((name) => (ignored ?? []).includes(name));
  const provider = both(lists.allowedProviders, lists.ignoredProviders);
  if (provider !== undefined) return `“${provider}” is both an allowed and an ignored provider: keep it in one list.`;
  const model = both(lists.allowedModels, lists.ignoredModels);
  if (model !== undefined) return `“${model}” is both an allowed and an ignored model: keep it in one list.`;
  return null;
}
