import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError } from "../api.js";
import type { PageProps } from "../app.js";
import { Empty, ErrorNote, Loading } from "../components/ui.js";
import { shortHash } from "../format.js";
import { useLoad } from "../use-load.js";
import { GenerationDrawer } from "./activity-detail.js";
import { ActivityFilters, isFiltered, noFilters, queryOf, type Filters, type KeyOption } from "./activity-filters.js";
import { newerGenerations, PAGE_SIZE, type Page } from "./activity-poll.js";
import { GenerationTable, type GenerationSummary } from "./activity-table.js";
import { loadWorkspaces, pages } from "./keys-api.js";
import "./activity.css";

/** How often the newest generations are asked again while Live is on, and a first page that failed is asked again. */
const POLL_MS = 3_000;

const newestFirst = (a: GenerationSummary, b: GenerationSummary) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1);
const plural = (n: number) => `${n} new generation${n === 1 ? "" : "s"}`;
const errorOf = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
/** A failure that may pass by itself: no answer, a busy gateway or a failing one; a refusal of the query stays one. */
const passing = (e: unknown) => e instanceof ApiError && (e.status === 0 || e.status === 429 || e.status >= 500);

export function ActivityPage({ call }: PageProps) {
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [live, setLive] = useState(true);
  const [rows, setRows] = useState<GenerationSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  /** The query the rows answer; differs from the current one while a new filter's first page loads. */
  const [shown, setShown] = useState<string | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [moreBusy, setMoreBusy] = useState(false);
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [announcement, setAnnouncement] = useState("");
  const [open, setOpen] = useState<GenerationSummary | null>(null);
  /** Counts the first page's failed tries, so that each asks again. */
  const [attempt, setAttempt] = useState(0);

  const { query, problem } = useMemo(() => queryOf(filters), [filters]);
  const key = JSON.stringify(query);
  // Answers that arrive after the filters changed belong to a list no longer on screen.
  const current = useRef(key);
  current.current = key;
  const ids = useRef(new Set<string>());
  /** Which list "Load more" continues: a new first page or a restarted list outdates a page still on its way. */
  const era = useRef(0);

  const keys = useLoad(async (signal) => (await pages<KeyOption>(call, "/keys", 1000, signal, Infinity, { include_disabled: true })).data, []);
  const workspaces = useLoad((signal) => loadWorkspaces(call, signal), []);
  const keyNames = useMemo(() => new Map((keys.data ?? []).map((k) => [k.hash, k.name])), [keys.data]);
  const keyName = (hash: string) => keyNames.get(hash) ?? shortHash(hash);
  const workspaceNames = useMemo(() => new Map((workspaces.data ?? []).map((w) => [w.id, w.name])), [workspaces.data]);
  const workspaceName = (id: string) => workspaceNames.get(id) ?? id;

  // A key created after the key names were read shows up as a hash: read them again, once per such hash (a
  // deleted key stays unnamed). Names that could not be read are asked again when generations arrive.
  const asked = useRef(new Set<string>());
  useEffect(() => {
    if (keys.loading) return;
    if (keys.error) {
      keys.reload();
      return;
    }
    const unknown = rows.map((r) => r.api_key_hash).filter((hash) => !keyNames.has(hash) && !asked.current.has(hash));
    if (unknown.length === 0) return;
    for (const hash of unknown) asked.current.add(hash);
    keys.reload();
  }, [rows, keys.data]);

  // Likewise for a workspace created after the workspaces were read, once per such workspace.
  const askedWorkspaces = useRef(new Set<string>());
  useEffect(() => {
    if (workspaces.loading || workspaces.error) return;
    const unknown = rows.map((r) => r.workspace_id).filter((id) => !workspaceNames.has(id) && !askedWorkspaces.current.has(id));
    if (unknown.length === 0) return;
    for (const id of unknown) askedWorkspaces.current.add(id);
    workspaces.reload();
  }, [rows, workspaces.data]);

  const show = (list: GenerationSummary[], next: string | null) => {
    era.current++;
    ids.current = new Set(list.map((r) => r.id));
    setRows(list);
    setCursor(next);
  };

  // The first page of each filter; one that failed for want of an answer is asked again until it comes.
  useEffect(() => {
    if (problem) return;
    const controller = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    call<Page>("/generations", { query: { ...query, limit: PAGE_SIZE }, signal: controller.signal }).then(
      (page) => {
        if (controller.signal.aborted) return;
        show(page.data, page.next_cursor);
        setFresh(new Set());
        setAnnouncement("");
        setError(null);
        setShown(key);
      },
      (e: unknown) => {
        if (controller.signal.aborted) return;
        setError(errorOf(e));
        if (passing(e)) retry = setTimeout(() => setAttempt((n) => n + 1), POLL_MS);
      },
    );
    return () => {
      controller.abort();
      clearTimeout(retry);
    };
  }, [key, problem, attempt]);

  // Live: what was recorded since the last look, merged in. A late record (a long stream that arrived
  // earlier) lands where its arrival time puts it, not on top.
  useEffect(() => {
    if (!live || problem || shown !== key) return;
    let busy = false;
    const controller = new AbortController();
    const timer = setInterval(async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const { added, restart } = await newerGenerations(call, query, ids.current, controller.signal);
        if (current.current !== key) return;
        // An answer is news enough: a failure shown since the last look is over.
        setError(null);
        if (added.length === 0) return;
        if (restart) {
          show(restart.rows, restart.cursor);
        } else {
          setRows((old) => {
            const merged = [...added, ...old].sort(newestFirst);
            ids.current = new Set(merged.map((r) => r.id));
            return merged;
          });
        }
        setFresh(new Set(added.map((r) => r.id)));
        setAnnouncement(plural(added.length));
      } catch (e) {
        if (!controller.signal.aborted) setError(errorOf(e));
      } finally {
        busy = false;
      }
    }, POLL_MS);
    return () => {
      clearInterval(timer);
      controller.abort();
    };
  }, [key, live, problem, shown]);

  const loadMore = async () => {
    if (!cursor) return;
    const from = era.current;
    setMoreBusy(true);
    try {
      const page = await call<Page>("/generations", { query: { ...query, limit: PAGE_SIZE, cursor } });
      if (current.current !== key || era.current !== from) return;
      setRows((old) => {
        const merged = [...old, ...page.data.filter((r) => !ids.current.has(r.id))];
        ids.current = new Set(merged.map((r) => r.id));
        return merged;
      });
      setCursor(page.next_cursor);
      setError(null);
    } catch (e) {
      setError(errorOf(e));
    } finally {
      setMoreBusy(false);
    }
  };

  const settled = shown === key && !problem;
  return (
    <div class="activity">
      <ActivityFilters value={filters} keys={keys.data ?? []} onChange={(patch) => setFilters((f) => ({ ...f, ...patch }))} />
      <div class="activity-live">
        <label class="check">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} />
          Live
        </label>
        <span class="hint">{live ? "New generations appear every few seconds." : "Paused: turn Live on to see new generations."}</span>
        <span class="hint activity-announce" role="status" aria-live="polite">
          {announcement}
        </span>
        <span class="hint activity-time-hint" id="activity-time-hint">
          From and To are UTC times: From included, To excluded.
        </span>
      </div>
      <ErrorNote error={problem} />
      <ErrorNote error={keys.error && `The key names could not be loaded: ${keys.error.message}`} />
      <ErrorNote error={error} />
      {rows.length === 0 && !settled && !error && !problem && <Loading />}
      {shown !== null &&
        (rows.length === 0 ? (
          settled &&
          (isFiltered(filters) ? (
            <Empty title="No generations match these filters">Widen the filters or clear them to see every generation.</Empty>
          ) : (
            <Empty title="No generations yet">
              Send a request with an inference key, or try a model in the <a href="#/playground">Playground</a>, and it appears here within
              seconds.
            </Empty>
          ))
        ) : (
          <div class={settled ? undefined : "activity-stale"} aria-busy={!settled}>
            <GenerationTable rows={rows} fresh={fresh} keyName={keyName} onOpen={setOpen} />
            <div class="actions">
              {cursor ? (
                <button type="button" onClick={loadMore} disabled={moreBusy || !settled}>
                  {moreBusy ? "Loading…" : "Load more"}
                </button>
              ) : (
                <span class="hint">That is every generation{isFiltered(filters) ? " matching these filters" : ""}.</span>
              )}
              <span class="hint">{rows.length} shown</span>
            </div>
          </div>
        ))}
      {open && <GenerationDrawer call={call} row={open} keyName={keyName(open.api_key_hash)} workspaceName={workspaceName} onClose={() => setOpen(null)} />}
    </div>
  );
}
