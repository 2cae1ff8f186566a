import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { Dialog, Field, FormActions } from "../components/ui.js";
import { messageOf, optionalNumber } from "./keys-api.js";
import { presetPath, type PresetVersion } from "./presets-api.js";

const slugPattern = /^[A-Za-z0-9._~-]+$/;

/** The version's pinned parameters other than the two the form has fields for. */
function advancedOf(version: PresetVersion | undefined): string {
  if (!version) return "";
  const rest = Object.fromEntries(Object.entries(version.config).filter(([k]) => k !== "model" && k !== "temperature"));
  return Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
}

function parseAdvanced(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`Request body (JSON) is not valid JSON: ${messageOf(e)}`, { cause: e });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("Request body (JSON) must be a JSON object, such as {\"max_tokens\": 200}.");
  return value as Record<string, unknown>;
}

/**
 * Saves a chat request body as a preset's next version (creating the preset on its first). With `slug`
 * given, it is a new version of that preset, prefilled from the designated one.
 */
export function PresetDialog({
  call,
  slug: fixedSlug,
  from,
  onSaved,
  onClose,
}: {
  call: Call;
  slug?: string;
  from?: PresetVersion;
  onSaved: () => void;
  onClose: () => void;
}) {
  const [slug, setSlug] = useState(fixedSlug ?? "");
  const [model, setModel] = useState(typeof from?.config.model === "string" ? from.config.model : "");
  const [prompt, setPrompt] = useState(from?.system_prompt ?? "");
  const [temperature, setTemperature] = useState(typeof from?.config.temperature === "number" ? String(from.config.temperature) : "");
  const [advanced, setAdvanced] = useState(advancedOf(from));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    let body: Record<string, unknown>;
    try {
      if (!slugPattern.test(slug)) throw new Error("Slug must be letters, digits, '-', '.', '_' or '~' (it becomes @preset/<slug>).");
      const temp = optionalNumber(temperature, "Temperature");
      body = {
        ...(model.trim() ? { model: model.trim() } : {}),
        ...(temp === null ? {} : { temperature: temp }),
        system_prompt: prompt,
        ...parseAdvanced(advanced),
      };
    } catch (e) {
      setError(messageOf(e));
      return;
    }
    setBusy(true);
    try {
      await call(`${presetPath(slug)}/chat/completions`, { method: "POST", body });
      onSaved();
      onClose();
    } catch (e) {
      setError(messageOf(e));
      setBusy(false);
    }
  };

  return (
    <Dialog title={fixedSlug ? `New version of ${fixedSlug}` : "New preset"} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        {from && <p class="hint">Prefilled from version {from.version}, the designated one. Saving makes the new version designated.</p>}
        <div class="form-grid">
          <Field label="Slug" hint={fixedSlug ? "A new version of this preset." : "Requests use it as @preset/<slug>."}>
            <input value={slug} autofocus={!fixedSlug} readOnly={Boolean(fixedSlug)} required maxLength={128} autoComplete="off" spellcheck={false} onInput={(e) => setSlug(e.currentTarget.value)} />
          </Field>
          <Field label="Model" hint="e.g. openai/gpt-4o-mini">
            <input value={model} autofocus={Boolean(fixedSlug)} autoComplete="off" spellcheck={false} onInput={(e) => setModel(e.currentTarget.value)} />
          </Field>
          <Field label="Temperature" hint="Empty leaves it to the request.">
            <input inputMode="decimal" value={temperature} autoComplete="off" onInput={(e) => setTemperature(e.currentTarget.value)} />
          </Field>
        </div>
        <div class="stack">
          <Field label="System prompt">
            <textarea value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
          </Field>
          <Field label="Request body (JSON)" hint='Other chat parameters to pin, merged over the fields above, e.g. {"max_tokens": 200, "provider": {"sort": "price"}}.'>
            <textarea class="mono" value={advanced} spellcheck={false} onInput={(e) => setAdvanced(e.currentTarget.value)} />
          </Field>
        </div>
        <FormActions error={error} busy={busy} submit="Save" busyText="Saving…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
