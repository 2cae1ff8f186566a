import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { Dialog, Field, FormActions } from "../components/ui.js";
import { changeAssignments, messageOf, toggled, type ApiKey, type Guardrail } from "./keys-api.js";
import { LimitFields, limitBody, limitsOf } from "./keys-fields.js";

/**
 * Edits a key's settings and which guardrails apply to it. The key is saved first, then each changed
 * assignment; a failure part-way is shown, and the table is refreshed either way so it shows what stuck.
 */
export function EditKeyDialog({
  call,
  apiKey,
  guardrails,
  assigned,
  onSaved,
  onClose,
}: {
  call: Call;
  apiKey: ApiKey;
  /** Undefined while (or because) guardrails could not be loaded: assignments are then left alone. */
  guardrails: Guardrail[] | undefined;
  assigned: Set<string>;
  onSaved: () => void;
  onClose: () => void;
}) {
  const [name, setName] = useState(apiKey.name);
  const [limits, setLimits] = useState(() => limitsOf(apiKey));
  const [byok, setByok] = useState(apiKey.include_byok_in_limit);
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(assigned));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const toggle = (id: string, on: boolean) => setChosen((before) => toggled(before, id, on));

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    let body: Record<string, unknown>;
    try {
      body = {
        name,
        ...limitBody(limits),
        include_byok_in_limit: byok,
      };
    } catch (e) {
      setError(messageOf(e));
      return;
    }
    setBusy(true);
    let saved = false;
    try {
      await call(`/keys/${apiKey.hash}`, { method: "PATCH", body });
      saved = true;
      for (const g of guardrails ?? []) {
        const want = chosen.has(g.id);
        if (want === assigned.has(g.id)) continue;
        await changeAssignments(call, g.id, want ? [apiKey.hash] : [], want ? [] : [apiKey.hash]);
      }
      onSaved();
      onClose();
    } catch (e) {
      setError(saved ? `The key was saved, but a guardrail assignment failed: ${messageOf(e)}` : messageOf(e));
      if (saved) onSaved();
      setBusy(false);
    }
  };

  return (
    <Dialog title={`Edit ${apiKey.name}`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <div class="form-grid">
          <Field label="Name">
            <input value={name} required maxLength={100} autofocus autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <LimitFields value={limits} onChange={(patch) => setLimits((l) => ({ ...l, ...patch }))} />
        </div>
        <label class="check keys-management">
          <input type="checkbox" checked={byok} onChange={(e) => setByok(e.currentTarget.checked)} />
          Include BYOK in limit
        </label>
        <p class="hint">Count spend on the workspace’s own provider keys against this key’s limit.</p>
        <fieldset class="checks">
          <legend>Guardrails</legend>
          {guardrails === undefined ? (
            <p class="hint">Guardrails could not be loaded, so assignments are left as they are.</p>
          ) : guardrails.length === 0 ? (
            <p class="hint">No guardrails yet — create one on the Guardrails and presets page.</p>
          ) : (
            guardrails.map((g) => (
              <label class="check" key={g.id}>
                <input type="checkbox" checked={chosen.has(g.id)} onChange={(e) => toggle(g.id, e.currentTarget.checked)} />
                {g.name}
              </label>
            ))
          )}
        </fieldset>
        <FormActions error={error} busy={busy} submit="Save" busyText="Saving…" onCancel={onClose} />
      </form>
    </Dialog>
  );
}
