import { useMemo } from "preact/hooks";
import { DayChart } from "../components/chart.js";
import { latencyTicks, millis, money, number, percent } from "../format.js";
import { chartsOf, type OverviewData } from "./overview-data.js";

// Charts redraw when their `format` changes, so these keep one identity for the page's life.
const moneyAxis = (v: number | null) => money(v);
const countAxis = (v: number | null) => number(v);
const rateAxis = (v: number | null) => percent(v);
const latencyAxis = (v: number | null) => millis(v);

const plural = (n: number, one: string, many = `${one}s`) => `${number(n)} ${n === 1 ? one : many}`;

/** The overview's five charts, one point per UTC day of the range. */
export function OverviewCharts({ days, data }: { days: string[]; data: OverviewData }) {
  const charts = useMemo(() => chartsOf(days, data), [days, data]);
  const span = plural(days.length, "day");
  const models = charts.models;
  const top = charts.topModel ? `; ${charts.topModel} spent the most` : "";
  const peak = (values: (number | null)[]) => values.reduce<number>((m, v) => Math.max(m, v ?? 0), 0);
  const dayTotals = (series: { values: (number | null)[] }[]) => days.map((_, d) => series.reduce((t, s) => t + (s.values[d] ?? 0), 0));
  return (
    <div class="charts">
      <DayChart
        title="Spend per day by model"
        summary={`${plural(models, "model")} over ${span}, at most ${money(peak(dayTotals(charts.spend)))} a day${top}.`}
        days={days}
        series={charts.spend}
        stacked
        format={moneyAxis}
      />
      <DayChart
        title="Requests per day by model"
        summary={`${plural(models, "model")} over ${span}, at most ${number(peak(dayTotals(charts.requests)))} requests a day.`}
        days={days}
        series={charts.requests}
        stacked
        format={countAxis}
        whole
      />
      <DayChart
        title="Tokens per day"
        summary={`Prompt, completion and reasoning tokens over ${span}; at most ${number(peak(charts.tokens[0]!.values))} prompt tokens a day.`}
        days={days}
        series={charts.tokens}
        format={countAxis}
        whole
      />
      <DayChart
        title="Error rate per day"
        summary={`Share of requests that failed or were cancelled, at most ${percent(peak(charts.errorRate[0]!.values))} on one day.`}
        days={days}
        series={charts.errorRate}
        format={rateAxis}
      />
      <DayChart
        title="p50 latency per day"
        summary={`Median generation time per day, at most ${millis(peak(charts.latency[0]!.values))}; days without requests are left blank.`}
        days={days}
        series={charts.latency}
        format={latencyAxis}
        ticks={latencyTicks}
      />
    </div>
  );
}
