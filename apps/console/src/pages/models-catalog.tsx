import { useMemo, useState } from "preact/hooks";
import { DataTable, type Column } from "../components/table.js";
import { Empty } from "../components/ui.js";
import { money, number } from "../format.js";

/** The fields of `GET /models` the console reads; prices are USD per unit as decimal strings. */
export interface CatalogModel {
  id: string;
  name: string;
  context_length: number;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  pricing: Record<string, string | undefined>;
}

export interface ModelList {
  data: CatalogModel[];
}

/** A per-token price shown per million tokens; OpenRouter writes a negative price for "decided per request". */
export function perMillion(raw: string | undefined): string {
  const value = Number(raw);
  if (raw === undefined || !Number.isFinite(value)) return "—";
  if (value < 0) return "varies";
  return `${money(value * 1_000_000)} / M`;
}

const isPriced = (raw: string | undefined) => raw !== undefined && Number(raw) !== 0 && Number.isFinite(Number(raw));

/** Prices other than prompt and completion, only where they cost something (speech, rerank, cache…). */
const extraPrices: { key: string; show: (raw: string) => string }[] = [
  { key: "request", show: (raw) => `${money(Number(raw))} / request` },
  { key: "image", show: (raw) => `${money(Number(raw))} / image` },
  { key: "input_cache_read", show: (raw) => `cache read ${perMillion(raw)}` },
  { key: "input_cache_write", show: (raw) => `cache write ${perMillion(raw)}` },
  { key: "input_cache_write_1h", show: (raw) => `cache write (1 h) ${perMillion(raw)}` },
  { key: "internal_reasoning", show: (raw) => `reasoning ${perMillion(raw)}` },
  { key: "web_search", show: (raw) => `${money(Number(raw))} / web search` },
  { key: "audio", show: (raw) => `audio in ${perMillion(raw)}` },
  { key: "audio_output", show: (raw) => `audio out ${perMillion(raw)}` },
  { key: "character", show: (raw) => `${perMillion(raw)} characters` },
  { key: "search_unit", show: (raw) => `${money(Number(raw))} / search unit` },
];

export function ExtraPrices({ pricing }: { pricing: Record<string, string | number | undefined> }) {
  const shown = extraPrices.filter((p) => isPriced(pricing[p.key] === undefined ? undefined : String(pricing[p.key])));
  if (shown.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="price-list">
      {shown.map((p) => (
        <li key={p.key}>{p.show(String(pricing[p.key]))}</li>
      ))}
    </ul>
  );
}

const columns: Column[] = [
  { title: "Model" },
  { title: "Context", num: true },
  { title: "Prompt", num: true },
  { title: "Completion", num: true },
  { title: "Other prices" },
  { title: "Modalities" },
  { title: "Endpoints", hidden: true },
];

const modalities = ["all", "text", "image", "embeddings", "audio", "speech", "transcription", "rerank"] as const;

/** The catalog with every output modality; `onEndpoints` opens one model's provider endpoints. */
export function ModelsTable({ models, onEndpoints }: { models: CatalogModel[]; onEndpoints: (model: CatalogModel) => void }) {
  const [search, setSearch] = useState("");
  const [modality, setModality] = useState<(typeof modalities)[number]>("all");
  const shown = useMemo(() => {
    const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
    return models
      .filter((m) => modality === "all" || m.architecture.output_modalities.includes(modality))
      .filter((m) => words.every((w) => m.id.toLowerCase().includes(w) || m.name.toLowerCase().includes(w)))
      .sort((a, b) => a.id.localeCompare(b.id));
  }, [models, search, modality]);

  return (
    <>
      <div class="toolbar">
        {/* Labels point at their controls rather than wrap them: a wrapping label's text would include every option. */}
        <div class="field">
          <label class="field-label" for="models-search">
            Search models
          </label>
          <input id="models-search" type="search" value={search} placeholder="id or name, e.g. gpt-4o" onInput={(e) => setSearch(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label class="field-label" for="models-modality">
            Modality
          </label>
          <select id="models-modality" value={modality} onChange={(e) => setModality(e.currentTarget.value as (typeof modalities)[number])}>
            {modalities.map((m) => (
              <option key={m} value={m}>
                {m === "all" ? "All modalities" : m}
              </option>
            ))}
          </select>
        </div>
        <p class="hint models-count" role="status">
          {shown.length === models.length ? `${number(models.length)} models` : `${number(shown.length)} of ${number(models.length)} models`}
        </p>
      </div>
      {models.length === 0 ? (
        <Empty title="The catalog has no models">The operator's catalog configuration lists the models the gateway offers.</Empty>
      ) : shown.length === 0 ? (
        <Empty title="No model matches">Try another search or choose “All modalities”.</Empty>
      ) : (
        <DataTable label="Models" class="models-table" columns={columns}>
          {shown.map((m) => (
            <tr key={m.id}>
              <td>
                <code>{m.id}</code>
                <div class="hint">{m.name}</div>
              </td>
              <td class="num">{m.context_length > 0 ? number(m.context_length) : "—"}</td>
              <td class="num">{perMillion(m.pricing.prompt)}</td>
              <td class="num">{perMillion(m.pricing.completion)}</td>
              <td>
                <ExtraPrices pricing={m.pricing} />
              </td>
              <td>
                {m.architecture.input_modalities.join(", ")} → <strong>{m.architecture.output_modalities.join(", ")}</strong>
              </td>
              <td>
                <button type="button" class="quiet" aria-label={`Endpoints of ${m.id}`} onClick={() => onEndpoints(m)}>
                  Endpoints
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
