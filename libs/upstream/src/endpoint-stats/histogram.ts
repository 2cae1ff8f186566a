/**
 * Log-scaled histograms: bucket `i` holds values in [least·ratio^i, least·ratio^(i+1)), so a percentile read
 * back from the counts is within half a bucket (about 4%) of the value measured, whatever its magnitude.
 * Counts are sparse (`{ [bucket]: count }`), as a minute of one endpoint fills a handful of buckets.
 */
export type Histogram = Record<string, number>;

const ratio = 1.08;
const least = 0.01;
const lastBucket = 300;
const logRatio = Math.log(ratio);

export function bucketOf(value: number): number {
  if (!(value > least)) return 0;
  return Math.min(lastBucket, Math.floor(Math.log(value / least) / logRatio));
}

/** The geometric middle of a bucket: what a percentile falling in it reads as. */
const middleOf = (bucket: number) => least * ratio ** (bucket + 0.5);

export function add(histogram: Histogram, value: number): void {
  if (!Number.isFinite(value) || value < 0) return;
  const bucket = String(bucketOf(value));
  histogram[bucket] = (histogram[bucket] ?? 0) + 1;
}

export function merge(into: Histogram, from: Histogram): void {
  for (const [bucket, count] of Object.entries(from)) {
    if (Number.isInteger(count) && count > 0) into[bucket] = (into[bucket] ?? 0) + count;
  }
}

export interface Percentiles {
  p50: number;
  p75: number;
  p90: number;
  p99: number;
}

/** p50, p75, p90 and p99 of what the histogram counted (nearest rank), rounded to 3 significant digits; null when empty. */
export function percentiles(histogram: Histogram): Percentiles | null {
  const buckets = Object.entries(histogram)
    .map(([bucket, count]) => [Number(bucket), count] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return null;
  const at = (q: number) => {
    const rank = Math.ceil(q * total);
    let seen = 0;
    for (const [bucket, count] of buckets) {
      seen += count;
      if (seen >= rank) return Number(middleOf(bucket).toPrecision(3));
    }
    return Number(middleOf(buckets.at(-1)![0]).toPrecision(3));
  };
  return { p50: at(0.5), p75: at(0.75), p90: at(0.9), p99: at(0.99) };
}
