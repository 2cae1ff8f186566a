import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { CopyButton, Dialog, ErrorNote, Field, FormActions } from "../components/ui.js";
import { useLoad } from "../use-load.js";
import { loadWorkspaces, messageOf, type ApiKey } from "./keys-api.js";
import { LimitFields, limitBody, noLimits, type LimitValues } from "./keys-fields.js";

interface Created {
  data: ApiKey;
  key: string;
}

/** `datetime-local` gives wall-clock time without a zone; the console treats it as UTC, as the hint says. */
function utcFromLocalInput(value: string): string | null {
  if (!value) return null;
  const date = new Date(`${value}Z`);
  if (Number.isNaN(date.getTime())) throw new Error("Expires must be a date and time.");
  return date.toISOString();
}

/**
 * Creates a key and shows its secret exactly once. The secret lives only in this dialog's state, so closing
 * the dialog (Done, Close or Escape) is what forgets it.
 */
export function CreateKeyDialog({ call, onCreated, onClose }: { call: Call; onCreated: (key: ApiKey) => void; onClose: () => void }) {
  const workspaces = useLoad((signal) => loadWorkspaces(call, signal), [call]);
  const ordered = [...(workspaces.data ?? [])].sort((a, b) => Number(b.is_default) - Number(a.is_default) || a.name.localeCompare(b.name));
  const [name, setName] = useState("");
  const [limits, setLimits] = useState<LimitValues>(noLimits);
  const [expires, setExpires] = useState("");
  const [workspace, setWorkspace] = useState("");
  const [management, setManagement] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);

  const close = () => {
    setSecret(null);
    onClose();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    let body: Record<string, unknown>;
    try {
      const expiresAt = utcFromLocalInput(expires);
      const chosenWorkspace = workspace || ordered[0]?.id;
      body = {
        name,
        ...limitBody(limits),
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        ...(chosenWorkspace ? { workspace_id: chosenWorkspace } : {}),
        is_management_key: management,
      };
    } catch (e) {
      setError(messageOf(e));
      return;
    }
    setBusy(true);
    try {
      const created = await call<Created>("/keys", { method: "POST", body });
      setSecret(created.key);
      onCreated(created.data);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  if (secret !== null) {
    return (
      <Dialog title="Create key" onClose={close}>
        <p class="notice" role="status">
          Key “{name.trim()}” created.
        </p>
        <p>Copy this secret now: it is not shown again.</p>
        <div class="secret">
          <code>{secret}</code>
          <CopyButton text={secret} />
        </div>
        <div class="actions">
          <button type="button" onClick={close}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title="Create key" onClose={close}>
      <form onSubmit={submit} noValidate>
        <div class="form-grid">
          <Field label="Name">
            <input value={name} required maxLength={100} autofocus autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
          </Field>
          <Field label="Workspace">
            <select value={workspace || ordered[0]?.id || ""} disabled={ordered.length === 0} onChange={(e) => setWorkspace(e.currentTarget.value)}>
              {ordered.length === 0 && <option value="">{workspaces.loading ? "Loading…" : "Default workspace"}</option>}
              {ordered.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.is_default ? `${w.name} (default)` : w.name}
                </option>
              ))}
            </select>
          </Field>
          <LimitFields value={limits} onChange={(patch) => setLimits((l) => ({ ...l, ...patch }))} />
          <Field label="Expires" hint="Optional, in UTC. Empty means it never expires.">
            <input type="datetime-local" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
          </Field>
        </div>
        <label class="check keys-management">
          <input type="checkbox" checked={management} onChange={(e) => setManagement(e.currentTarget.checked)} />
          Management key
        </label>
        <p class="hint">A management key administers keys, guardrails and presets through the API, as this console does. Leave it unchecked for an application’s key.</p>
        <ErrorNote error={workspaces.error && `Workspaces could not be loaded: ${workspaces.error.message}`} />
        <FormActions error={error} busy={busy} submit="Create" busyText="Creating…" onCancel={close} />
      </form>
    </Dialog>
  );
}
