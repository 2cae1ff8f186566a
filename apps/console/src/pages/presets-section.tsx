import { useState } from "preact/hooks";
import type { Call } from "../api.js";
import { DataTable, RowActions, type Column } from "../components/table.js";
import { Empty, LoadError, Loading } from "../components/ui.js";
import { dateTime } from "../format.js";
import { useLoad } from "../use-load.js";
import { ConfirmDialog } from "./keys-confirm.js";
import { loadPresets, presetPath, type PresetRow } from "./presets-api.js";
import { PresetDialog } from "./presets-form.js";
import { PresetVersionsDialog } from "./presets-versions.js";

type Open = { kind: "create" } | { kind: "version" | "versions" | "delete"; row: PresetRow } | null;

const columns: Column[] = [{ title: "Preset" }, { title: "Designated version" }, { title: "Model" }, { title: "Updated" }, { title: "Actions", hidden: true }];

function PresetsTable({ rows, onOpen }: { rows: PresetRow[]; onOpen: (open: Open) => void }) {
  return (
    <DataTable label="Presets" class="keys-table" columns={columns}>
      {rows.map((row) => {
        const { preset, designated } = row;
        return (
          <tr key={preset.id}>
            <td>
              <strong>{preset.slug}</strong>
              {preset.name !== preset.slug && <span class="sub">{preset.name}</span>}
              {preset.description && <span class="sub">{preset.description}</span>}
              <span class="sub">
                <code>@preset/{preset.slug}</code>
              </span>
            </td>
            <td>{designated ? `Version ${designated.version}` : <span class="sub-none">{row.problem ?? "—"}</span>}</td>
            <td>{typeof designated?.config.model === "string" ? <code>{designated.config.model}</code> : <span class="sub-none">—</span>}</td>
            <td>{dateTime(preset.updated_at)}</td>
            <td>
              <RowActions
                name={preset.slug}
                across
                actions={[
                  { label: "Versions", onClick: () => onOpen({ kind: "versions", row }) },
                  { label: "New version", disabled: !designated, onClick: () => onOpen({ kind: "version", row }) },
                  { label: "Delete", danger: true, onClick: () => onOpen({ kind: "delete", row }) },
                ]}
              />
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}

export function PresetsSection({ call }: { call: Call }) {
  const presets = useLoad((signal) => loadPresets(call, signal), [call]);
  const [open, setOpen] = useState<Open>(null);
  const rows = presets.data ?? [];
  const close = () => setOpen(null);

  return (
    <>
      <div class="toolbar keys-toolbar">
        <p class="hint">
          A preset pins a model, a system prompt and parameters; requests use it as <code>@preset/&lt;slug&gt;</code>, which runs its designated version.
        </p>
        <button type="button" onClick={() => setOpen({ kind: "create" })}>
          New preset
        </button>
      </div>
      <LoadError what="Presets" error={presets.error} onRetry={presets.reload} />
      {presets.loading && !presets.data && <Loading />}
      {presets.data && rows.length === 0 && <Empty title="No presets yet">Save a model, system prompt and parameters under a name with “New preset”.</Empty>}
      {rows.length > 0 && <PresetsTable rows={rows} onOpen={setOpen} />}

      {open?.kind === "create" && <PresetDialog call={call} onSaved={presets.reload} onClose={close} />}
      {open?.kind === "version" && (
        <PresetDialog call={call} slug={open.row.preset.slug} from={open.row.designated ?? undefined} onSaved={presets.reload} onClose={close} />
      )}
      {open?.kind === "versions" && <PresetVersionsDialog call={call} slug={open.row.preset.slug} onChanged={presets.reload} onClose={close} />}
      {open?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete ${open.row.preset.slug}?`}
          action="Delete preset"
          onClose={close}
          onConfirm={async () => {
            await call(presetPath(open.row.preset.slug), { method: "DELETE" });
            close();
            presets.reload();
          }}
        >
          <p>
            Requests that use <code>@preset/{open.row.preset.slug}</code> will fail, and every version of it goes too. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
