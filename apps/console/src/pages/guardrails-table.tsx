import { DataTable, RowActions, type Column } from "../components/table.js";
import { money } from "../format.js";
import { zdrEverywhere, zdrVendors } from "./guardrails-form.js";
import type { Guardrail } from "./keys-api.js";

function AllowIgnore({ allowed, ignored }: { allowed: string[] | null; ignored: string[] | null }) {
  if (!allowed?.length && !ignored?.length) return <span class="sub-none">Any</span>;
  return (
    <>
      {allowed?.length ? <span class="line">Only: {allowed.join(", ")}</span> : null}
      {ignored?.length ? <span class="line">Never: {ignored.join(", ")}</span> : null}
    </>
  );
}

function Zdr({ guardrail }: { guardrail: Guardrail }) {
  if (zdrEverywhere(guardrail)) return <span class="badge ok">All vendors</span>;
  const vendors = zdrVendors(guardrail);
  return vendors.length ? <>{vendors.join(", ")}</> : <span class="sub-none">Off</span>;
}

const columns: Column[] = [
  { title: "Name" },
  { title: "Description" },
  { title: "Budget" },
  { title: "Providers" },
  { title: "Models" },
  { title: "Data regions" },
  { title: "ZDR" },
  { title: "Content filters", num: true },
  { title: "Keys assigned", num: true },
  { title: "Actions", hidden: true },
];

export interface GuardrailRowActions {
  onEdit: (g: Guardrail) => void;
  onKeys: (g: Guardrail) => void;
  onDelete: (g: Guardrail) => void;
}

export function GuardrailsTable({ guardrails, keyCounts, actions }: { guardrails: Guardrail[]; keyCounts: Map<string, number> | undefined; actions: GuardrailRowActions }) {
  return (
    <DataTable label="Guardrails" class="keys-table" columns={columns}>
      {guardrails.map((g) => {
        const filters = g.content_filter_builtins.length + (g.content_filters?.length ?? 0);
        return (
          <tr key={g.id}>
            <td>
              <strong>{g.name}</strong>
            </td>
            <td>{g.description || <span class="sub-none">—</span>}</td>
            <td>
              {g.limit_usd === null ? (
                <span class="sub-none">No budget</span>
              ) : (
                <>
                  {money(g.limit_usd)}
                  <span class="sub">{g.reset_interval ? `resets ${g.reset_interval}` : "never resets"}</span>
                </>
              )}
            </td>
            <td>
              <AllowIgnore allowed={g.allowed_providers} ignored={g.ignored_providers} />
            </td>
            <td>
              <AllowIgnore allowed={g.allowed_models} ignored={g.ignored_models} />
            </td>
            <td>{g.allowed_data_regions?.length ? g.allowed_data_regions.join(", ") : <span class="sub-none">Any</span>}</td>
            <td>
              <Zdr guardrail={g} />
            </td>
            <td class="num">{filters}</td>
            <td class="num">{keyCounts ? (keyCounts.get(g.id) ?? 0) : "—"}</td>
            <td>
              <RowActions
                name={g.name}
                across
                actions={[
                  { label: "Edit", onClick: () => actions.onEdit(g) },
                  { label: "Keys", onClick: () => actions.onKeys(g) },
                  { label: "Delete", danger: true, onClick: () => actions.onDelete(g) },
                ]}
              />
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
