import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface ChartSeries {
  label: string;
  /** One value per day; null where there is nothing to show. */
  values: (number | null)[];
}

/** Colours with at least 3:1 contrast against the white plot area, told apart by hue and lightness. */
export const palette = ["#1d4ed8", "#c2410c", "#047857", "#7c3aed", "#b91c1c", "#0e7490", "#a16207", "#be185d", "#4b5563"];

const dayTime = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

/** Tick steps of 1, 2 and 5 times a power of ten and no smaller: a count has no fractions to mark. */
const wholeSteps = Array.from({ length: 13 }, (_, power) => [1, 2, 5].map((m) => m * 10 ** power)).flat();

/**
 * A chart of figures per UTC day. `stacked` draws bars whose segments add up (each series on top of the
 * ones before it); otherwise one line per series. The canvas carries a text summary for screen readers.
 * `format` writes a value in the legend and, unless `ticks` writes them all at once, each tick of the axis;
 * `whole` keeps the axis to whole-number steps.
 */
export function DayChart({
  title,
  summary,
  days,
  series,
  stacked,
  format,
  ticks,
  whole,
}: {
  title: string;
  summary: string;
  days: string[];
  series: ChartSeries[];
  stacked?: boolean;
  format: (v: number | null) => string;
  ticks?: (values: number[]) => string[];
  whole?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const raw = series.map((s) => s.values);
    // Stacked bars: series i draws the sum of itself and every series after it, so the first (tallest) is drawn
    // first and each later, shorter one in front of it; the legend keeps the series' own order.
    const drawn = stacked ? raw.map((_, i) => days.map((_, d) => raw.slice(i).reduce<number>((t, v) => t + (v[d] ?? 0), 0))) : raw;
    const bars = uPlot.paths.bars!({ size: [0.7, 48] });
    const options: uPlot.Options = {
      width: el.clientWidth || 600,
      height: 220,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [{ space: 60 }, { size: 84, ...(whole ? { incrs: wholeSteps } : {}), values: (_u, values) => (ticks ? ticks(values) : values.map((t) => format(t))) }],
      legend: { live: true },
      cursor: { points: { show: !stacked } },
      series: [
        { value: (_u, ts) => (ts === null ? "" : new Date(ts * 1000).toISOString().slice(0, 10)) },
        ...series.map((one, i) => ({
          label: one.label,
          stroke: palette[i % palette.length],
          fill: stacked ? palette[i % palette.length] : undefined,
          width: stacked ? 0 : 2,
          paths: stacked ? bars : undefined,
          spanGaps: !stacked,
          points: { show: !stacked && days.length <= 31 },
          value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) => (idx === null ? "" : format(raw[i]![idx] ?? null)),
        })),
      ],
    };
    const data: uPlot.AlignedData = [days.map(dayTime), ...drawn];
    const plot = new uPlot(options, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days, series, stacked, format, ticks, whole]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${summary}`} />
    </figure>
  );
}
