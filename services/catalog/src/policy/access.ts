import type { WorkspacePolicy } from "@switchyard/contracts";
import type { GuardrailRow } from "../guardrails/records.js";
import type { EndpointEntry } from "../models/snapshot.js";

/** Everything that narrows what a request may use: workspace, guardrails of the key, regional hostname. */
export interface AccessPolicy {
  workspace: Pick<WorkspacePolicy, "allowed_providers" | "ignored_providers" | "data_collection" | "zdr" | "byok">;
  guardrails: readonly GuardrailRow[];
  /** Set when the request came in on a regional hostname. */
  region?: string | undefined;
  /** The variant the request named (`free`, `floor`, `nitro`), which a guardrail's model lists may name too. */
  variant?: string | null | undefined;
}

const zdrVendor: Record<string, "anthropic" | "openai" | "google" | "xai"> = {
  anthropic: "anthropic",
  openai: "openai",
  google: "google",
  "x-ai": "xai",
  xai: "xai",
};

/** A model is listed by its id, which covers its variants, or by the id of the variant asked for (`vendor/model:floor`). */
const modelListed = (list: readonly string[], id: string, variant: string | null | undefined) =>
  list.includes(id) || (variant !== null && variant !== undefined && list.includes(`${id}:${variant}`));
/** Free: every price the endpoint lists is zero, whatever its unit (token, request, second, character, search unit, image). */
export const isFree = (e: EndpointEntry) => Object.values(e.pricing).every((p) => p === undefined || Number(p) === 0);

/**
 * What OpenRouter's `data_collection: deny` excludes: a provider that stores prompts beyond the request
 * (non-transiently) or trains on them. Says which, or undefined when it does neither.
 */
export function collectsData(policy: { training: boolean; retains_prompts: boolean }): string | undefined {
  if (policy.training) return "trains on prompts";
  if (policy.retains_prompts) return "retains prompts";
  return undefined;
}

/**
 * Why an endpoint may not serve this request, or undefined when it may. The reason names the constraint
 * so a caller told "no endpoint" can see what to change.
 */
export function exclusionOf(e: EndpointEntry, policy: AccessPolicy): string | undefined {
  const provider = e.providerEntry;
  // A provider the operator has no key for serves a workspace that brought its own.
  if (!provider.usable && !policy.workspace.byok.some((k) => k.provider === provider.slug)) return `provider ${provider.slug} has no API key configured`;
  if (policy.region && e.region !== policy.region) return `endpoint is in region ${e.region}, not ${policy.region}`;
  const ws = policy.workspace;
  if (ws.allowed_providers && !ws.allowed_providers.includes(provider.slug)) return `workspace allows only providers ${ws.allowed_providers.join(", ")}`;
  if (ws.ignored_providers?.includes(provider.slug)) return `workspace ignores provider ${provider.slug}`;
  if (ws.data_collection === "deny" && collectsData(provider.data_policy)) return `workspace denies data collection and ${provider.slug} ${collectsData(provider.data_policy)}`;
  if (ws.zdr && !e.zdr) return `workspace requires zero data retention`;
  for (const g of policy.guardrails) {
    const reason = guardrailExclusion(e, g, policy.variant);
    if (reason) return `guardrail "${g.name}": ${reason}`;
  }
  return undefined;
}

function guardrailExclusion(e: EndpointEntry, g: GuardrailRow, variant: string | null | undefined): string | undefined {
  const slug = e.providerEntry.slug;
  if (g.allowed_providers && !g.allowed_providers.includes(slug)) return `allows only providers ${g.allowed_providers.join(", ")}`;
  if (g.ignored_providers?.includes(slug)) return `ignores provider ${slug}`;
  const asked = variant ? `${e.model.id}:${variant}` : e.model.id;
  if (g.allowed_models && !modelListed(g.allowed_models, e.model.id, variant)) return `does not allow model ${asked}`;
  if (g.ignored_models && modelListed(g.ignored_models, e.model.id, variant)) return `ignores model ${asked}`;
  if (g.allowed_data_regions && !g.allowed_data_regions.some((r) => r === e.region)) {
    return `allows only data regions ${g.allowed_data_regions.join(", ")}`;
  }
  const vendor = zdrVendor[e.model.id.split("/", 1)[0]!] ?? "other";
  const zdrRequired = g.settings[`enforce_zdr_${vendor}`] ?? g.enforce_zdr ?? false;
  if (zdrRequired && !e.zdr) return `requires zero data retention for ${vendor} models`;
  if (isFree(e) && e.providerEntry.data_policy.publishes_free_prompts && !g.settings.enable_free_model_publication) {
    return `does not allow free endpoints that may publish prompts (${slug})`;
  }
  if (e.providerEntry.data_policy.training) {
    const allowed = isFree(e) ? g.settings.enable_free_model_training : g.settings.enable_paid_model_training;
    if (!allowed) return `does not allow providers that train on prompts (${slug})`;
  }
  return undefined;
}

export const allowedEndpoints = (endpoints: readonly EndpointEntry[], policy: AccessPolicy) =>
  endpoints.filter((e) => exclusionOf(e, policy) === undefined);
