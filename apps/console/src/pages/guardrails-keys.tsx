import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { Dialog, ErrorNote, FormActions, Loading } from "../components/ui.js";
import { useLoad } from "../use-load.js";
import { changeAssignments, isExpired, loadKeys, messageOf, pages, toggled, type ApiKey, type Guardrail, type KeyAssignment } from "./keys-api.js";

interface Loaded {
  keys: ApiKey[];
  assigned: KeyAssignment[];
}

function KeyChoices({ loaded, chosen, toggle }: { loaded: Loaded; chosen: Set<string>; toggle: (hash: string, on: boolean) => void }) {
  // An assignment whose key the list does not carry still deserves a box, so it can be removed.
  const known = new Set(loaded.keys.map((k) => k.hash));
  const rows = [
    ...loaded.keys.map((k) => ({ hash: k.hash, name: k.name, label: k.label, note: k.disabled ? "disabled" : isExpired(k) ? "expired" : k.is_management_key ? "management" : "" })),
    ...loaded.assigned.filter((a) => !known.has(a.key_hash)).map((a) => ({ hash: a.key_hash, name: a.key_name, label: a.key_label, note: "" })),
  ];
  if (rows.length === 0) return <p class="hint">No keys yet — create one on the Keys page.</p>;
  return (
    <>
      {rows.map((r) => (
        <label class="check" key={r.hash}>
          <input type="checkbox" checked={chosen.has(r.hash)} onChange={(e) => toggle(r.hash, e.currentTarget.checked)} />
          <span>
            {r.name} <code class="sub-none">{r.label}</code>
            {r.note && <span class="sub-none"> ({r.note})</span>}
          </span>
        </label>
      ))}
    </>
  );
}

/** Which keys a guardrail applies to: a box per key, saved as one assign and one unassign call. */
export function GuardrailKeysDialog({ call, guardrail, onSaved, onClose }: { call: Call; guardrail: Guardrail; onSaved: () => void; onClose: () => void }) {
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const loaded = useLoad(async (signal): Promise<Loaded> => {
    const [keys, assigned] = await Promise.all([
      loadKeys(call, signal),
      pages<KeyAssignment>(call, `/guardrails/${guardrail.id}/assignments/keys`, 1000, signal),
    ]);
    setChosen(new Set(assigned.data.map((a) => a.key_hash)));
    return { keys: keys.data, assigned: assigned.data };
  }, [call, guardrail.id]);

  const toggle = (hash: string, on: boolean) => setChosen((before) => toggled(before, hash, on));

  const save = async (event: Event) => {
    event.preventDefault();
    if (!loaded.data || !chosen) return;
    const before = new Set(loaded.data.assigned.map((a) => a.key_hash));
    setBusy(true);
    setError(null);
    try {
      await changeAssignments(
        call,
        guardrail.id,
        [...chosen].filter((h) => !before.has(h)),
        [...before].filter((h) => !chosen.has(h)),
      );
      onSaved();
      onClose();
    } catch (e) {
      setError(messageOf(e));
      onSaved();
      setBusy(false);
    }
  };

  const assignedNames = loaded.data?.assigned.map((a) => a.key_name) ?? [];
  return (
    <Dialog title={`Keys of ${guardrail.name}`} onClose={onClose} side>
      {loaded.loading && !loaded.data && <Loading />}
      <ErrorNote error={loaded.error && `Keys could not be loaded: ${loaded.error.message}`} />
      {loaded.data && chosen && (
        <form onSubmit={save}>
          <p>
            {assignedNames.length === 0
              ? "Not assigned to a key yet."
              : `Assigned to ${assignedNames.length === 1 ? "1 key" : `${assignedNames.length} keys`}: ${assignedNames.join(", ")}.`}
          </p>
          <fieldset class="checks">
            <legend>Apply this guardrail to</legend>
            <KeyChoices loaded={loaded.data} chosen={chosen} toggle={toggle} />
          </fieldset>
          <FormActions error={error} busy={busy} submit="Save assignments" busyText="Saving…" onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
