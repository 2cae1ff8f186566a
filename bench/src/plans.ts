/**
 * The gateway comparison's plans: which API (dialect) is called, buffered or streamed, at which concurrency.
 * Written as `[dialect:]mode:concurrency` (`buffered:10`, `responses:stream:10`); without a dialect a plan is
 * chat completions, so lists written before Responses plans existed mean what they meant.
 */

/** `chat`: `POST /chat/completions`; `responses`: `POST /responses` (the OpenAI Responses API). */
export const dialects = ["chat", "responses"] as const;
export type Dialect = (typeof dialects)[number];

export interface ChatPlan {
  dialect: Dialect;
  stream: boolean;
  concurrency: number;
}

/** The plans `npm run bench` runs unless BENCH_CHAT_PLANS says otherwise; each Responses plan beside chat's of its mode and concurrency. */
export const defaultPlans = "buffered:1,buffered:10,responses:buffered:10,buffered:50,stream:1,stream:10,responses:stream:10,stream:50";

const isDialect = (text: string): text is Dialect => dialects.some((d) => d === text);

/** One plan from its text (`buffered:10`, `chat:stream:1`, `responses:buffered:10`); throws on anything else. */
export function parsePlan(text: string): ChatPlan {
  const parts = text.trim().split(":");
  const [dialect, mode, concurrency] = parts.length === 3 ? parts : ["chat", ...parts];
  const count = Number(concurrency);
  if (!dialect || !isDialect(dialect) || (mode !== "buffered" && mode !== "stream") || !Number.isInteger(count) || count < 1) {
    throw new Error(`BENCH_CHAT_PLANS: bad plan ${text} (expected [chat:|responses:]buffered|stream:<concurrency>)`);
  }
  return { dialect, stream: mode === "stream", concurrency: count };
}

/** Plans as a comma-separated list (`buffered:1,responses:stream:10`). */
export const parsePlans = (text: string): ChatPlan[] => text.split(",").map(parsePlan);

export const planMode = (plan: Pick<ChatPlan, "stream">) => (plan.stream ? "stream" : "buffered");

/** The plan as it is written: `buffered:10`, `responses:stream:10` (chat without its prefix). */
export const planLabel = (plan: ChatPlan) => `${plan.dialect === "chat" ? "" : `${plan.dialect}:`}${planMode(plan)}:${plan.concurrency}`;

/** The targets the Responses plans run against: Switchyard's (the upstream of direct calls speaks chat completions only). */
export const responsesTargetNames: readonly string[] = ["standalone", "standalone-pg", "topology"];

/** Whether a plan of `dialect` runs against the target named `target`. */
export const servesDialect = (target: string, dialect: Dialect) => dialect === "chat" || responsesTargetNames.includes(target);

/** For the printed header: which of `targets` each non-chat dialect among `plans` skips, e.g. `responses plans skip direct, portkey`. */
export function skippedTargets(plans: readonly ChatPlan[], targets: readonly string[]): string[] {
  const used = dialects.filter((dialect) => dialect !== "chat" && plans.some((plan) => plan.dialect === dialect));
  return used.flatMap((dialect) => {
    const skipped = targets.filter((target) => !servesDialect(target, dialect));
    return skipped.length ? [`${dialect} plans skip ${skipped.join(", ")} (only Switchyard's targets are called on ${dialect === "responses" ? "the Responses API" : dialect})`] : [];
  });
}
