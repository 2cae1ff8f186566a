import { useMemo, useState } from "preact/hooks";
import type { Call } from "../api.js";
import type { PageProps } from "../app.js";
import { Empty, LoadError, Loading } from "../components/ui.js";
import { useLoad } from "../use-load.js";
import { GuardrailDialog } from "./guardrails-form.js";
import { GuardrailKeysDialog } from "./guardrails-keys.js";
import { GuardrailsTable } from "./guardrails-table.js";
import { loadGuardrailIndex, type Guardrail } from "./keys-api.js";
import { ConfirmDialog } from "./keys-confirm.js";
import { PresetsSection } from "./presets-section.js";
import "./keys.css";
import "./guardrails.css";

type Open = { kind: "create" } | { kind: "edit" | "keys" | "delete"; guardrail: Guardrail } | null;

function GuardrailsSection({ call }: { call: Call }) {
  const index = useLoad((signal) => loadGuardrailIndex(call, signal), [call]);
  const [open, setOpen] = useState<Open>(null);
  const keyCounts = useMemo(() => {
    if (!index.data) return undefined;
    const counts = new Map<string, number>();
    for (const a of index.data.assignments) counts.set(a.guardrail_id, (counts.get(a.guardrail_id) ?? 0) + 1);
    return counts;
  }, [index.data]);
  const list = index.data?.guardrails ?? [];

  return (
    <>
      <div class="toolbar keys-toolbar">
        <p class="hint">Guardrails restrict the keys they are assigned to: providers, models, data regions, zero data retention and a shared budget.</p>
        <button type="button" onClick={() => setOpen({ kind: "create" })}>
          Create guardrail
        </button>
      </div>
      <LoadError what="Guardrails" error={index.error} onRetry={index.reload} />
      {index.loading && !index.data && <Loading />}
      {index.data && list.length === 0 && (
        <Empty title="No guardrails yet">Create one to limit what the keys it is assigned to may spend and use.</Empty>
      )}
      {list.length > 0 && (
        <GuardrailsTable
          guardrails={list}
          keyCounts={keyCounts}
          actions={{
            onEdit: (guardrail) => setOpen({ kind: "edit", guardrail }),
            onKeys: (guardrail) => setOpen({ kind: "keys", guardrail }),
            onDelete: (guardrail) => setOpen({ kind: "delete", guardrail }),
          }}
        />
      )}

      {open?.kind === "create" && <GuardrailDialog call={call} onSaved={index.reload} onClose={() => setOpen(null)} />}
      {open?.kind === "edit" && <GuardrailDialog call={call} guardrail={open.guardrail} onSaved={index.reload} onClose={() => setOpen(null)} />}
      {open?.kind === "keys" && <GuardrailKeysDialog call={call} guardrail={open.guardrail} onSaved={index.reload} onClose={() => setOpen(null)} />}
      {open?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete ${open.guardrail.name}?`}
          action="Delete guardrail"
          onClose={() => setOpen(null)}
          onConfirm={async () => {
            await call(`/guardrails/${open.guardrail.id}`, { method: "DELETE" });
            setOpen(null);
            index.reload();
          }}
        >
          <p>
            {(keyCounts?.get(open.guardrail.id) ?? 0) > 0
              ? `The ${keyCounts?.get(open.guardrail.id) === 1 ? "key" : `${keyCounts?.get(open.guardrail.id)} keys`} it is assigned to lose its restrictions and budget at once.`
              : "No key is assigned to it."}{" "}
            This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

export function GuardrailsPage({ call }: PageProps) {
  return (
    <>
      <section aria-labelledby="guardrails-heading">
        <h2 id="guardrails-heading">Guardrails</h2>
        <GuardrailsSection call={call} />
      </section>
      <section aria-labelledby="presets-heading" class="presets">
        <h2 id="presets-heading">Presets</h2>
        <PresetsSection call={call} />
      </section>
    </>
  );
}
