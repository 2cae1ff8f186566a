import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { Dialog, Field, FormActions } from "../components/ui.js";
import { plainAmount } from "../format.js";
import { listProblem, loadKnown } from "./guardrails-check.js";
import { messageOf, optionalMoney, type DataRegion, type Guardrail, type LimitReset } from "./keys-api.js";
import { ResetField } from "./keys-fields.js";

const regions: { value: DataRegion; label: string }[] = [
  { value: "global", label: "Global" },
  { value: "europe", label: "Europe" },
  { value: "us", label: "US" },
];

const vendorFlags = ["enforce_zdr_anthropic", "enforce_zdr_openai", "enforce_zdr_google", "enforce_zdr_xai", "enforce_zdr_other"] as const;

/** Zero data retention is one switch per model vendor; the form's single checkbox means "all of them". */
export const zdrEverywhere = (g: Guardrail) => vendorFlags.every((f) => g[f]);
const vendorNames: Record<(typeof vendorFlags)[number], string> = {
  enforce_zdr_anthropic: "Anthropic",
  enforce_zdr_openai: "OpenAI",
  enforce_zdr_google: "Google",
  enforce_zdr_xai: "xAI",
  enforce_zdr_other: "other vendors",
};
export const zdrVendors = (g: Guardrail) => vendorFlags.filter((f) => g[f]).map((f) => vendorNames[f]);

const joined = (list: string[] | null | undefined) => (list ?? []).join(", ");
const listOf = (text: string): string[] | null => {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : null;
};

function ContentFilters({ guardrail }: { guardrail: Guardrail }) {
  const custom = guardrail.content_filters ?? [];
  if (guardrail.content_filter_builtins.length === 0 && custom.length === 0) return <p class="hint">No content filters. They are set through the API.</p>;
  return (
    <>
    <ul class="filters">
      {guardrail.content_filter_builtins.map((b) => (
        <li key={`b-${b.slug}`}>
          <code>{b.slug}</code> — {b.action}
          {b.action === "redact" && <> as <code>{b.label}</code></>}
          {b.scan_scope === "user_only" && " (user messages only)"}
        </li>
      ))}
      {custom.map((c, i) => (
        <li key={`p-${i}`}>
          pattern <code>{c.pattern}</code> — {c.action}
          {c.action === "redact" && <> as <code>{c.label ?? "[REDACTED]"}</code></>}
        </li>
      ))}
    </ul>
    <p class="hint">Shown here read-only; they are changed through the API.</p>
    </>
  );
}

/** Creates a guardrail, or edits one (PATCH); content filters are shown but left untouched. */
export function GuardrailDialog({ call, guardrail, onSaved, onClose }: { call: Call; guardrail?: Guardrail; onSaved: () => void; onClose: () => void }) {
  const g = guardrail;
  const [name, setName] = useState(g?.name ?? "");
  const [description, setDescription] = useState(g?.description ?? "");
  const [budget, setBudget] = useState(g?.limit_usd === null || g?.limit_usd === undefined ? "" : plainAmount(g.limit_usd));
  const [reset, setReset] = useState<LimitReset | "">(g?.reset_interval ?? "");
  const [allowedProviders, setAllowedProviders] = useState(joined(g?.allowed_providers));
  const [ignoredProviders, setIgnoredProviders] = useState(joined(g?.ignored_providers));
  const [allowedModels, setAllowedModels] = useState(joined(g?.allowed_models));
  const [ignoredModels, setIgnoredModels] = useState(joined(g?.ignored_models));
  const [chosenRegions, setChosenRegions] = useState<DataRegion[]>(g?.allowed_data_regions ?? []);
  const initialZdr = g ? zdrEverywhere(g) : false;
  const [zdr, setZdr] = useState(initialZdr);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const partialZdr = g && !initialZdr ? zdrVendors(g) : [];
  // Asked once, as the form opens; a save waits for the answer rather than go unchecked.
  const [known] = useState(() => loadKnown(call));

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setError(null);
    setBusy(true);
    const lists = {
      allowedProviders: listOf(allowedProviders),
      ignoredProviders: listOf(ignoredProviders),
      allowedModels: listOf(allowedModels),
      ignoredModels: listOf(ignoredModels),
    };
    let body: Record<string, unknown>;
    try {
      const limit = optionalMoney(budget, "Budget");
      if ((limit === null) !== (reset === "")) throw new Error("A budget needs a reset interval, and a reset interval needs a budget: set both or neither.");
      const problem = listProblem(lists, await known);
      if (problem) throw new Error(problem);
      body = {
        name,
        description: description.trim() || null,
        limit_usd: limit,
        reset_interval: reset || null,
        allowed_providers: lists.allowedProviders,
        ignored_providers: lists.ignoredProviders,
        allowed_models: lists.allowedModels,
        ignored_models: lists.ignoredModels,
        allowed_data_regions: chosenRegions.length ? regions.map((r) => r.value).filter((r) => chosenRegions.includes(r)) : null,
        // Untouched, a guardrail's per-vendor switches (perhaps set through the API) stay as they are.
        ...(zdr !== initialZdr || !g ? Object.fromEntries(vendorFlags.map((f) => [f, zdr])) : {}),
      };
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
      return;
    }
    try {
      await call(g ? `/guardrails/${g.id}` : "/guardrails", { method: g ? "PATCH" : "POST", body });
      onSaved();
      onClose();
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };

  const listField = (label: string, value: string, set: (v: string) => void, hint: string) => (
    <Field label={label} hint={hint}>
      <input value={value} autoComplete="off" spellcheck={false} onInput={(e) => set(e.currentTarget.value)} />
    </Field>
  );

  return (
    <Dialog title={g ? `Edit ${g.name}` : "Create guardrail"} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <div class="form-grid">
          <Field label="Name">
            <input value={name} required maxLength={200} autofocus autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label="Description">
            <input value={description} maxLength={1000} autoComplete="off" onInput={(e) => setDescription(e.currentTarget.value)} />
          </Field>
          <Field label="Budget (USD)" hint="For each key it is assigned to, on its own. Empty means no budget.">
            <input inputMode="decimal" value={budget} autoComplete="off" onInput={(e) => setBudget(e.currentTarget.value)} />
          </Field>
          <ResetField label="Budget resets" value={reset} onChange={setReset} />
          {listField("Allowed providers", allowedProviders, setAllowedProviders, "Comma-separated slugs, e.g. openai, anthropic. Empty: no restriction.")}
          {listField("Ignored providers", ignoredProviders, setIgnoredProviders, "Comma-separated slugs never used.")}
          {listField("Allowed models", allowedModels, setAllowedModels, "Comma-separated ids, e.g. openai/gpt-4o-mini. Empty: no restriction.")}
          {listField("Ignored models", ignoredModels, setIgnoredModels, "Comma-separated ids never used.")}
        </div>
        <fieldset class="checks inline">
          <legend>Allowed data regions</legend>
          {regions.map((r) => (
            <label class="check" key={r.value}>
              <input
                type="checkbox"
                checked={chosenRegions.includes(r.value)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setChosenRegions((list) => (on ? [...list, r.value] : list.filter((x) => x !== r.value)));
                }}
              />
              {r.label}
            </label>
          ))}
          <span class="hint">None checked: every region.</span>
        </fieldset>
        <label class="check keys-management">
          <input type="checkbox" checked={zdr} onChange={(e) => setZdr(e.currentTarget.checked)} />
          Enforce ZDR
        </label>
        <p class="hint">
          Every vendor’s models only on zero-data-retention endpoints.
          {partialZdr.length > 0 && ` Now enforced for ${partialZdr.join(", ")} only; checking this extends it to every vendor.`}
        </p>
        {g && (
          <>
            <h3>Content filters</h3>
            <ContentFilters guardrail={g} />
          </>
        )}
        <FormActions error={error} busy={busy} submit="Save" busyText="Saving…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
