import { useEffect, useMemo, useState } from "preact/hooks";
import type { PageProps } from "../app.js";
import { Empty, ErrorNote, LoadError, Loading } from "../components/ui.js";
import { session } from "../session.js";
import { useLoad } from "../use-load.js";
import { changeAssignments, KEY_PAGE, loadGuardrailIndex, loadKeys, messageOf, type ApiKey } from "./keys-api.js";
import { ConfirmDialog } from "./keys-confirm.js";
import { CreateKeyDialog } from "./keys-create.js";
import { EditKeyDialog } from "./keys-edit.js";
import { KeysTable } from "./keys-table.js";
import "./keys.css";

type Open = { kind: "create" } | { kind: "edit"; key: ApiKey } | { kind: "delete"; key: ApiKey } | null;

/**
 * The gateway names keys by the SHA-256 of their secret, so hashing the signed-in key finds its row —
 * worth marking, because disabling or deleting it signs this console out. Needs a secure context.
 */
function useOwnHash(): string | null {
  const [hash, setHash] = useState<string | null>(null);
  useEffect(() => {
    const secret = session.key();
    if (!secret || !globalThis.crypto?.subtle) return;
    crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)).then(
      (digest) => setHash([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")),
      () => setHash(null),
    );
  }, []);
  return hash;
}

export function KeysPage({ call }: PageProps) {
  const [shown, setShown] = useState(KEY_PAGE);
  /** Keys created on this page: listed oldest first, a new key may lie pages beyond those loaded. */
  const [created, setCreated] = useState<string[]>([]);
  const keys = useLoad((signal) => loadKeys(call, signal, shown, created), [call, shown, created]);
  const index = useLoad((signal) => loadGuardrailIndex(call, signal), [call]);
  const ownHash = useOwnHash();
  const [open, setOpen] = useState<Open>(null);
  const [busyHash, setBusyHash] = useState<string | null>(null);
  const [freshHash, setFreshHash] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);

  const guardrailNames = useMemo(() => {
    if (!index.data) return undefined;
    const names = new Map(index.data.guardrails.map((g) => [g.id, g.name]));
    const byKey = new Map<string, string[]>();
    for (const a of index.data.assignments) {
      const list = byKey.get(a.key_hash) ?? [];
      list.push(names.get(a.guardrail_id) ?? "unknown guardrail");
      byKey.set(a.key_hash, list);
    }
    return byKey;
  }, [index.data]);

  const assignedTo = (hash: string) => new Set(index.data?.assignments.filter((a) => a.key_hash === hash).map((a) => a.guardrail_id) ?? []);

  const refresh = () => {
    keys.reload();
    index.reload();
  };

  const toggle = async (key: ApiKey) => {
    setBusyHash(key.hash);
    setActionError(null);
    try {
      await call(`/keys/${key.hash}`, { method: "PATCH", body: { disabled: !key.disabled } });
      keys.reload();
    } catch (e) {
      setActionError(`Could not ${key.disabled ? "enable" : "disable"} “${key.name}”: ${messageOf(e)}`);
    } finally {
      setBusyHash(null);
    }
  };

  const list = keys.data?.data ?? [];
  const total = keys.data?.total_count ?? 0;

  return (
    <>
      <div class="toolbar keys-toolbar">
        <p class="hint">
          Inference keys call models; management keys administer the gateway. Secrets are shown once, when a key is created.
        </p>
        <button type="button" onClick={() => setOpen({ kind: "create" })}>
          Create key
        </button>
      </div>
      <ErrorNote error={actionError} />
      <LoadError what="Keys" error={keys.error} onRetry={refresh} />
      {index.error && (
        <div class="load-error">
          <ErrorNote error={`Guardrail assignments could not be loaded, so the Guardrails column is blank: ${index.error.message}`} />
          {/* When the keys failed too, their Try again asks for both. */}
          {!keys.error && (
            <button type="button" class="quiet" onClick={index.reload}>
              Try again
            </button>
          )}
        </div>
      )}
      {keys.loading && !keys.data && <Loading />}
      {keys.data && list.length === 0 && (
        <Empty title="No keys yet">Create one with “Create key”: applications call models with an inference key.</Empty>
      )}
      {list.length > 0 && (
        <KeysTable
          keys={list}
          guardrailNames={guardrailNames}
          ownHash={ownHash}
          freshHash={freshHash}
          busyHash={busyHash}
          actions={{
            onEdit: (key) => setOpen({ kind: "edit", key }),
            onToggle: toggle,
            onDelete: (key) => setOpen({ kind: "delete", key }),
          }}
        />
      )}
      {list.length > 0 && (
        <div class="actions">
          <span class="hint" role="status">
            Showing {list.length} of {total} keys{keys.loading ? " — refreshing…" : ""}
          </span>
          {total > list.length && (
            <button type="button" class="quiet" disabled={keys.loading} onClick={() => setShown((n) => n + KEY_PAGE)}>
              Load more
            </button>
          )}
        </div>
      )}

      {open?.kind === "create" && (
        <CreateKeyDialog
          call={call}
          onCreated={(key) => {
            setFreshHash(key.hash);
            setCreated((hashes) => [key.hash, ...hashes]);
          }}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === "edit" && (
        <EditKeyDialog
          call={call}
          apiKey={open.key}
          guardrails={index.data?.guardrails}
          assigned={assignedTo(open.key.hash)}
          onSaved={refresh}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete ${open.key.name}?`}
          action="Delete key"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            const hash = open.key.hash;
            await call(`/keys/${hash}`, { method: "DELETE" });
            // The gateway keeps a deleted key's guardrail assignments (listed as "(deleted key)"); dropping them keeps counts true.
            await Promise.allSettled([...assignedTo(hash)].map((id) => changeAssignments(call, id, [], [hash])));
            setOpen(null);
            refresh();
          }}
        >
          <p>
            Requests with the key <code>{open.key.label}</code> will be refused from now on. This cannot be undone.
          </p>
          {open.key.hash === ownHash && <p class="error">This console is signed in with this key: deleting it signs you out.</p>}
        </ConfirmDialog>
      )}
    </>
  );
}
