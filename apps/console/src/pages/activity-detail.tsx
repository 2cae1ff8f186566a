import { Fragment, type ComponentChildren } from "preact";
import { ApiError, type Call } from "../api.js";
import { DataTable, type Column } from "../components/table.js";
import { Dialog, ErrorNote, Loading } from "../components/ui.js";
import { dateTime, millis, money, number } from "../format.js";
import { useLoad } from "../use-load.js";
import type { GenerationSummary } from "./activity-table.js";
import type { Workspace } from "./keys-api.js";

/** One upstream attempt, as `provider_responses` carries it (libs/contracts/src/generation.ts). */
interface Attempt {
  status: number | null;
  provider_name?: string;
  model_permaslug?: string;
  endpoint_id?: string;
  latency?: number;
  is_byok?: boolean;
}

/** The parts of `GET /generation`'s record the drawer shows. */
interface GenerationDetail {
  id: string;
  upstream_id: string | null;
  request_id?: string | null;
  session_id?: string | null;
  created_at: string;
  model: string;
  api_type: string | null;
  workspace_id: string | null;
  preset_id: string | null;
  http_referer: string | null;
  user_agent: string | null;
  external_user: string | null;
  data_region: string;
  provider_name: string | null;
  provider_responses: Attempt[] | null;
  service_tier: string | null;
  streamed: boolean | null;
  finish_reason: string | null;
  native_finish_reason: string | null;
  is_byok: boolean;
  latency: number | null;
  generation_time: number | null;
  tokens_prompt: number | null;
  tokens_completion: number | null;
  native_tokens_reasoning: number | null;
  native_tokens_cached: number | null;
  total_cost: number;
  cache_discount: number | null;
  upstream_inference_cost: number | null;
  response_cache_source_id?: string | null;
  content_filters?: unknown[];
  metadata?: Record<string, string>;
  app_title?: string;
  excluded_endpoints?: string[];
}

/** What input/output logging kept (`GET /generation/content`). */
interface GenerationContent {
  error: { message: string | null; status: number | null; provider_name: string | null } | null;
  input: { prompt: string } | { messages: unknown[] };
  output: { completion: string | null; reasoning: string | null };
}

const attemptColumns: Column[] = [{ title: "#" }, { title: "Provider" }, { title: "Model" }, { title: "Status" }, { title: "Latency", num: true }];

/**
 * A workspace's settings reach the routers and services a little after they change, so a generation made
 * this long after the last change is taken to have been made under the settings the workspace has now.
 */
const settledMs = 60_000;

/**
 * Whether logged content may exist for a generation of `workspace` made at `createdAt`. Content kept while
 * logging was on stays until its retention passes, so a workspace with logging off now rules it out only
 * when nothing has changed in the workspace since well before the generation.
 */
export function mayKeepContent(workspace: Workspace, createdAt: string): boolean {
  if (workspace.is_observability_io_logging_enabled && workspace.io_logging_sampling_rate > 0) return true;
  if (workspace.updated_at === null) return false;
  return !(Date.parse(workspace.updated_at) + settledMs <= Date.parse(createdAt));
}

const noContent = { content: null, error: null };

const yesNo = (v: boolean | null | undefined) => (v === null || v === undefined ? null : v ? "yes" : "no");

/** A chat message as text: its role, then its text parts (anything else as JSON). */
function messageText(message: unknown): string {
  if (typeof message !== "object" || message === null) return JSON.stringify(message);
  const { role, content } = message as { role?: unknown; content?: unknown };
  const parts = Array.isArray(content) ? content : [content];
  const text = parts
    .map((p) => (typeof p === "string" ? p : typeof p === "object" && p !== null && "text" in p && typeof p.text === "string" ? p.text : JSON.stringify(p, null, 2)))
    .join("\n");
  return `[${typeof role === "string" ? role : "message"}]\n${text}`;
}

function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows
        .filter(([, v]) => v !== null && v !== undefined && v !== "")
        .map(([term, v]) => (
          <Fragment key={term}>
            <dt>{term}</dt>
            <dd>{v}</dd>
          </Fragment>
        ))}
    </dl>
  );
}

function Content({ content }: { content: GenerationContent | null }) {
  if (!content) return <p class="notice">Input/output logging is off for this workspace, so the prompt and answer were not kept.</p>;
  const prompt = "prompt" in content.input ? content.input.prompt : content.input.messages.map(messageText).join("\n\n");
  return (
    <>
      <h4>Prompt</h4>
      <pre>{prompt}</pre>
      {content.output.reasoning && (
        <>
          <h4>Reasoning</h4>
          <pre>{content.output.reasoning}</pre>
        </>
      )}
      <h4>Answer</h4>
      <pre>{content.output.completion ?? "(no answer)"}</pre>
      {content.error && (
        <>
          <h4>Error given to the client</h4>
          <pre>{[content.error.status, content.error.provider_name, content.error.message].filter((v) => v !== null).join(" · ")}</pre>
        </>
      )}
    </>
  );
}

/** The drawer of one generation: its record, its upstream attempts, what routing left out, and what was logged. */
export function GenerationDrawer({ call, row, keyName, workspaceName, onClose }: { call: Call; row: GenerationSummary; keyName: string; workspaceName: (id: string) => string; onClose: () => void }) {
  const { data, error, loading } = useLoad(
    async (signal) => {
      const readContent = () =>
        // A 404 here means nothing was kept; every other failure is worth showing.
        call<{ data: GenerationContent }>("/generation/content", { query: { id: row.id }, signal }).then(
          (r) => ({ content: r.data, error: null }),
          (e: unknown) => (e instanceof ApiError && e.status === 404 ? noContent : { content: null, error: e instanceof Error ? e : new Error(String(e)) }),
        );
      const [detail, content] = await Promise.all([
        call<{ data: GenerationDetail }>("/generation", { query: { id: row.id }, signal }),
        // The workspace's settings say whether content can be there; asking for it where it cannot only earns a 404.
        // A workspace that cannot be read leaves the question to the content's own answer.
        call<{ data: Workspace }>(`/workspaces/${encodeURIComponent(row.workspace_id)}`, { signal }).then(
          (w) => (mayKeepContent(w.data, row.created_at) ? readContent() : noContent),
          (e: unknown) => {
            if (signal.aborted) throw e;
            return readContent();
          },
        ),
      ]);
      return { detail: detail.data, ...content };
    },
    [row.id],
  );
  const g = data?.detail;
  const attempts = g?.provider_responses ?? [];
  const excluded = g?.excluded_endpoints ?? [];

  return (
    <Dialog side title={`Generation ${row.id}`} onClose={onClose}>
      {loading && !data && <Loading />}
      <ErrorNote error={error} />
      {g && (
        <div class="generation-detail">
          <Facts
            rows={[
              ["Model", g.model],
              ["Provider", g.provider_name ?? row.provider ?? "none"],
              ["Upstream model", row.upstream_model],
              ["Status", row.status],
              ["Created", dateTime(g.created_at)],
              ["Prompt tokens", number(g.tokens_prompt)],
              ["Completion tokens", number(g.tokens_completion)],
              ["Reasoning tokens", g.native_tokens_reasoning ? number(g.native_tokens_reasoning) : null],
              ["Cached tokens", g.native_tokens_cached ? number(g.native_tokens_cached) : null],
              ["Usage estimated", row.usage_estimated ? "yes: the provider reported no usage, so the gateway estimated it" : null],
              ["Total cost", money(g.total_cost)],
              g.is_byok
                ? ["BYOK cost", g.upstream_inference_cost === null ? null : `${money(g.upstream_inference_cost)}, paid to the provider with the workspace's own key`]
                : ["Upstream cost", g.upstream_inference_cost === null ? null : money(g.upstream_inference_cost)],
              ["Cache discount", g.cache_discount === null ? null : money(g.cache_discount)],
              ["BYOK", g.is_byok ? "yes: served with the workspace's own provider key" : "no"],
              ["Time to first token", millis(g.latency)],
              ["Generation time", millis(g.generation_time)],
              ["Finish reason", g.finish_reason && g.native_finish_reason && g.native_finish_reason !== g.finish_reason ? `${g.finish_reason} (provider: ${g.native_finish_reason})` : (g.finish_reason ?? g.native_finish_reason)],
              ["Key", keyName],
              ["Workspace", g.workspace_id ? workspaceName(g.workspace_id) : null],
              ["API type", g.api_type],
              ["Streamed", yesNo(g.streamed)],
              ["Service tier", g.service_tier],
              ["Data region", g.data_region],
              ["Preset", g.preset_id],
              ["App", g.app_title ?? g.http_referer],
              ["User agent", g.user_agent],
              ["External user", g.external_user],
              ["Session", g.session_id ?? null],
              ["Request id", g.request_id ? <code>{g.request_id}</code> : null],
              ["Upstream id", g.upstream_id ? <code>{g.upstream_id}</code> : null],
              ["Answered from cache of", g.response_cache_source_id ? <code>{g.response_cache_source_id}</code> : null],
              ["Content filters", g.content_filters?.length ? `${number(g.content_filters.length)} finding(s) in the prompt` : null],
              ...Object.entries(g.metadata ?? {}).map(([k, v]): [string, ComponentChildren] => [`Metadata: ${k}`, v]),
            ]}
          />

          <h3>Attempts</h3>
          {attempts.length === 0 ? (
            <p class="hint">No provider was tried.</p>
          ) : (
            <DataTable label="Attempts" columns={attemptColumns}>
              {attempts.map((a, i) => (
                <tr key={i}>
                  <td class="num">{i + 1}</td>
                  <td>
                    {a.provider_name ?? a.endpoint_id ?? "—"}
                    {a.is_byok ? " (BYOK)" : ""}
                  </td>
                  <td>{a.model_permaslug ?? "—"}</td>
                  <td>
                    <span class={`badge ${a.status !== null && a.status >= 200 && a.status < 300 ? "ok" : "bad"}`}>{a.status ?? "no answer"}</span>
                  </td>
                  <td class="num">{millis(a.latency)}</td>
                </tr>
              ))}
            </DataTable>
          )}

          <h3>Excluded endpoints</h3>
          {excluded.length === 0 ? (
            <p class="hint">Routing left no endpoint out.</p>
          ) : (
            <ul class="excluded">
              {excluded.map((e) => (
                <li key={e}>{e}</li>
              ))}
            </ul>
          )}

          <h3>Prompt and answer</h3>
          <ErrorNote error={data.error} />
          {!data.error && <Content content={data.content} />}
        </div>
      )}
    </Dialog>
  );
}
