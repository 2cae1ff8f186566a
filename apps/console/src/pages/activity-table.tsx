import { DataTable, type Column } from "../components/table.js";
import { millis, money, number } from "../format.js";

/** One row of `GET /generations` (libs/contracts/src/activity.ts). */
export interface GenerationSummary {
  id: string;
  created_at: string;
  operation: string;
  model: string;
  provider: string | null;
  upstream_model: string | null;
  status: "completed" | "error" | "cancelled";
  api_key_hash: string;
  workspace_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  usage_estimated: boolean;
  /** What the key was billed, as the generation's record says: nothing when served with a workspace's own provider key. */
  cost: number;
  is_byok: boolean;
  /** A BYOK generation's price at the endpoint's rates, paid to the provider with the workspace's key; 0 otherwise. */
  byok_cost: number;
  generation_time_ms: number | null;
}

const badge = { completed: "ok", error: "bad", cancelled: "warn" } as const;

/** `2026-11-27 03:28:31`: the column header says it is UTC, so the cell stays short. */
const utcTime = (iso: string) => iso.slice(0, 19).replace("T", " ");

const columns: Column[] = [
  { title: "Time (UTC)" },
  { title: "Model" },
  { title: "Provider" },
  { title: "Operation" },
  { title: "Status" },
  { title: "Key" },
  { title: "Tokens", num: true },
  { title: "Cost", num: true },
  { title: "Duration", num: true },
];

export function GenerationTable({ rows, fresh, keyName, onOpen }: { rows: GenerationSummary[]; fresh: Set<string>; keyName: (hash: string) => string; onOpen: (row: GenerationSummary) => void }) {
  return (
    <DataTable caption="Generations" class="generations" columns={columns}>
      {rows.map((r) => (
        <tr key={r.id} class={fresh.has(r.id) ? "fresh" : undefined}>
          <td>
            <button type="button" class="quiet time" aria-label={`Details of ${r.id}`} onClick={() => onOpen(r)}>
              {utcTime(r.created_at)}
            </button>
          </td>
          <td class="mono">{r.model}</td>
          <td>{r.provider ?? "—"}</td>
          <td>{r.operation}</td>
          <td>
            <span class={`badge ${badge[r.status] ?? "muted"}`}>{r.status}</span>
          </td>
          <td>{keyName(r.api_key_hash)}</td>
          <td class="num">
            {number(r.prompt_tokens)} → {number(r.completion_tokens)}
            {r.usage_estimated && (
              <abbr class="estimated" title="Estimated: the provider reported no usage">
                {" "}
                est.
              </abbr>
            )}
          </td>
          <td class="num">
            {money(r.cost)}
            {r.is_byok && (
              <span class="badge muted byok" title="Served with the workspace's own provider key: the key was billed nothing, and this is the provider's price">
                BYOK {money(r.byok_cost)}
              </span>
            )}
          </td>
          <td class="num">{millis(r.generation_time_ms)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
