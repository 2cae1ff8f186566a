/** The figures of one row of the comparison that the goals read. */
export interface GoalRow {
  target: string;
  mode: string;
  concurrency: number;
  cpu_ms_per_request: number;
  added_p50_ms?: number | undefined;
  added_ttfb_p50_ms?: number | undefined;
}

/** One performance goal of the comparison, as measured in this run; `met` is undefined when a row it needs did not run. */
export interface GoalCheck {
  goal: string;
  measured: string;
  met: boolean | undefined;
}

const fixed = (n: number) => n.toFixed(3);

/**
 * The comparison's performance goals, judged on the rows of one run: gateway CPU per buffered request at
 * c=10 against Portkey's (standalone at most half, the topology at most the same), standalone's added p50 at
 * c=1 under 1 ms, and each Switchyard form's added time to the first streamed byte at c=1 under 2 ms.
 */
export function checkGoals(rows: readonly GoalRow[]): GoalCheck[] {
  const find = (target: string, mode: "buffered" | "stream", concurrency: number) =>
    rows.find((r) => r.target === target && r.mode === mode && r.concurrency === concurrency);
  const portkey = find("portkey", "buffered", 10);

  const cpuShare = (target: string, most: number): GoalCheck => {
    const goal = `${target} CPU per request at most ${most === 1 ? "Portkey's" : `${most} of Portkey's`} (buffered, c=10)`;
    const own = find(target, "buffered", 10);
    if (!own || !portkey) return { goal, measured: "not measured", met: undefined };
    const share = own.cpu_ms_per_request / portkey.cpu_ms_per_request;
    return { goal, measured: `${fixed(own.cpu_ms_per_request)} vs ${fixed(portkey.cpu_ms_per_request)} ms = ${share.toFixed(2)}`, met: share <= most };
  };

  const under = (goal: string, value: number | undefined, limit: number): GoalCheck =>
    value === undefined ? { goal, measured: "not measured", met: undefined } : { goal, measured: `${fixed(value)} ms`, met: value < limit };

  return [
    cpuShare("standalone", 0.5),
    cpuShare("topology", 1),
    under("standalone adds under 1 ms at p50 (buffered, c=1)", find("standalone", "buffered", 1)?.added_p50_ms, 1),
    under("standalone adds under 2 ms to the first streamed byte (c=1)", find("standalone", "stream", 1)?.added_ttfb_p50_ms, 2),
    under("topology adds under 2 ms to the first streamed byte (c=1)", find("topology", "stream", 1)?.added_ttfb_p50_ms, 2),
  ];
}

/** `met`, `not met` or `not measured`, for the printed table. */
export const verdict = (check: GoalCheck) => (check.met === undefined ? "not measured" : check.met ? "met" : "not met");
