import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { PageProps } from "../app.js";
import { Empty, ErrorNote, Field, Loading } from "../components/ui.js";
import { millis, money, number, percent, utcDay } from "../format.js";
import { useLoad } from "../use-load.js";
import { OverviewCharts } from "./overview-charts.js";
import { MAX_DAYS, daysBetween, rangeProblem, totalsOf, type Credits, type DailyRow, type OverviewData } from "./overview-data.js";
import "./overview.css";

/** New generations show within seconds without the page being reloaded by hand. */
const REFRESH_MS = 10_000;
/** The gateway's answer when no organization-wide credit limit is set. */
const NO_LIMIT = 1e9;

type Range = "7" | "30" | "90" | "custom";
const ranges: { value: Range; label: string }[] = [
  { value: "7", label: "Last 7 days" },
  { value: "30", label: "Last 30 days" },
  { value: "90", label: "Last 90 days" },
  { value: "custom", label: "Custom" },
];

interface Loaded extends OverviewData {
  from: string;
  to: string;
}

function Tile({ id, label, value, children }: { id: string; label: string; value: string; children?: ComponentChildren }) {
  return (
    <div class="tile">
      <div class="label" id={`tile-${id}`}>
        {label}
      </div>
      <div class="value" aria-labelledby={`tile-${id}`}>
        {value}
      </div>
      {children && <div class="hint">{children}</div>}
    </div>
  );
}

export function OverviewPage({ call }: PageProps) {
  const [range, setRange] = useState<Range>("30");
  const [customFrom, setCustomFrom] = useState(utcDay(-29));
  const [customTo, setCustomTo] = useState(utcDay(0));
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const timer = setInterval(() => {
      // A hidden tab has no one to show the figures to; it catches up when shown again.
      if (!document.hidden) setTick((t) => t + 1);
    }, REFRESH_MS);
    const onShow = () => !document.hidden && setTick((t) => t + 1);
    document.addEventListener("visibilitychange", onShow);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onShow);
    };
  }, []);

  // Ranges end today, so a preset's days move on at UTC midnight at the next refresh.
  const from = range === "custom" ? customFrom : utcDay(1 - Number(range));
  const to = range === "custom" ? customTo : utcDay(0);
  const problem = range === "custom" ? rangeProblem(from, to) : null;

  // An unchanged answer keeps its identity, so a refresh that brings nothing new redraws nothing.
  const last = useRef<{ text: string; value: Loaded } | null>(null);
  const { data, error, loading } = useLoad<Loaded | null>(
    async (signal) => {
      if (problem) return last.current?.value ?? null;
      const [byModel, total, credits] = await Promise.all([
        call<{ data: DailyRow[] }>("/activity/daily", { query: { from, to, group_by: "model" }, signal }),
        call<{ data: DailyRow[] }>("/activity/daily", { query: { from, to }, signal }),
        call<{ data: Credits }>("/credits", { signal }),
      ]);
      const value: Loaded = { from, to, byModel: byModel.data, total: total.data, credits: credits.data };
      const text = JSON.stringify(value);
      if (last.current?.text === text) return last.current.value;
      last.current = { text, value };
      return value;
    },
    [from, to, problem, tick],
  );

  const days = useMemo(() => (data ? daysBetween(data.from, data.to) : []), [data?.from, data?.to]);
  const totals = useMemo(() => totalsOf(data?.total ?? []), [data]);
  const stale = data && (data.from !== from || data.to !== to);

  return (
    <div class="overview">
      <div class="toolbar">
        <Field label="Range">
          <select value={range} onChange={(e) => setRange(e.currentTarget.value as Range)}>
            {ranges.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </Field>
        {range === "custom" && (
          <>
            <Field label="From">
              <input type="date" value={customFrom} max={utcDay(0)} aria-describedby="overview-range-hint" onInput={(e) => setCustomFrom(e.currentTarget.value)} />
            </Field>
            <Field label="To">
              <input type="date" value={customTo} max={utcDay(0)} aria-describedby="overview-range-hint" onInput={(e) => setCustomTo(e.currentTarget.value)} />
            </Field>
            {/* Outside the labels, so the fields are named just "From" and "To". */}
            <p class="hint overview-range-hint" id="overview-range-hint">
              UTC days, both included; {MAX_DAYS} days at most.
            </p>
          </>
        )}
        <p class="hint overview-refresh">
          {days.length > 0 && !stale ? `${days[0]} to ${days[days.length - 1]} (UTC). ` : ""}Refreshes every 10 seconds.
        </p>
      </div>
      <ErrorNote error={problem} />
      <ErrorNote error={problem ? null : error} />
      {!data ? (
        loading && !problem && <Loading />
      ) : (
        <>
          {stale && loading && <Loading />}
          <div class={stale ? "tiles overview-stale" : "tiles"}>
            <Tile id="spend" label="Spend" value={money(totals.spend)}>
              {totals.byok > 0 ? `plus ${money(totals.byok)} BYOK, paid with workspaces' own provider keys` : "charged to keys"}
            </Tile>
            <Tile id="requests" label="Requests" value={number(totals.requests)}>
              {number(totals.errors)} failed or cancelled
            </Tile>
            <Tile id="tokens" label="Tokens" value={number(totals.promptTokens + totals.completionTokens)}>
              {number(totals.promptTokens)} prompt · {number(totals.completionTokens)} completion
              {totals.reasoningTokens > 0 ? ` (${number(totals.reasoningTokens)} reasoning)` : ""}
            </Tile>
            <Tile id="error-rate" label="Error rate" value={totals.requests > 0 ? percent(totals.errors / totals.requests) : "—"}>
              failed or cancelled, of all requests
            </Tile>
            <Tile id="p50" label="p50 latency" value={millis(totals.p50)}>
              {totals.p50Days > 1 ? "p50 of daily medians, weighted by requests" : "median generation time"}
            </Tile>
            <Tile id="credits" label="Credits" value={money(data.credits.total_usage)}>
              {data.credits.total_credits >= NO_LIMIT ? "used all time; no limit set" : `used all time, of ${money(data.credits.total_credits)}`}
            </Tile>
          </div>
          {totals.requests === 0 ? (
            <Empty title="No activity in this range">
              Send a request with an inference key, or try a model in the <a href="#/playground">Playground</a>; its cost shows here within
              seconds.
            </Empty>
          ) : (
            <div class={stale ? "overview-stale" : undefined}>
              <h2>Per day</h2>
              <OverviewCharts days={days} data={data} />
            </div>
          )}
        </>
      )}
    </div>
  );
}
