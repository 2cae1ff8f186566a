/**
 * The gateway comparison's plans: which API (dialect) is called, buffered or streamed, at which concurrency,
 * and for chat completions how large a conversation is sent. Written as `[dialect:]mode:concurrency[:size]`
 * (`buffered:10`, `responses:stream:10`, `messages:buffered:10`, `embeddings:buffered:10`, `buffered:10:64k`);
 * without a dialect a plan is chat completions, so lists written before other dialects existed mean what they
 * meant; without a size a chat plan sends the one-message "Say hello" body.
 */

/**
 * `chat`: `POST /chat/completions`; `responses`: `POST /responses` (the OpenAI Responses API); `messages`:
 * `POST /messages` (Anthropic's Messages API); `embeddings`: `POST /embeddings` (OpenAI's embeddings API).
 */
export const dialects = ["chat", "responses", "messages", "embeddings"] as const;
export type Dialect = (typeof dialects)[number];

/** Each dialect's API as the printed notes and goals name it. */
export const apiNames: Record<Dialect, string> = { chat: "Chat Completions", responses: "Responses", messages: "Messages", embeddings: "Embeddings" };

/** Whether a dialect has streamed answers: every one but embeddings, whose answer is one JSON list. */
export const streams = (dialect: Dialect) => dialect !== "embeddings";

/** The modes a dialect's plans can have: buffered and streamed, or buffered only. */
export const modesOf = (dialect: Dialect): readonly boolean[] => (streams(dialect) ? [false, true] : [false]);

/**
 * The sizes of the large chat conversations a plan can send (see conversation.ts), each with its JSON body's
 * size in KiB: a system prompt, then user and assistant turns of prose and code, as coding agents send.
 */
export const promptSizes = { "64k": 64, "256k": 256 } as const;
export type PromptSize = keyof typeof promptSizes;

export interface ChatPlan {
  dialect: Dialect;
  stream: boolean;
  concurrency: number;
  /** Chat plans only: the size of the conversation sent; without it the body is one "Say hello" message. */
  prompt?: PromptSize;
}

/**
 * The plans `npm run bench` runs unless BENCH_CHAT_PLANS says otherwise; each other dialect's plan beside
 * chat's of its mode and concurrency, and the large conversations buffered at c=10 after them.
 */
export const defaultPlans =
  "buffered:1,buffered:10,responses:buffered:10,messages:buffered:10,embeddings:buffered:10,buffered:10:64k,buffered:10:256k,buffered:50,stream:1,stream:10,responses:stream:10,messages:stream:10,stream:50";

const isDialect = (text: string): text is Dialect => dialects.some((d) => d === text);
const isPromptSize = (text: string): text is PromptSize => Object.keys(promptSizes).includes(text);
const isMode = (text: string | undefined) => text === "buffered" || text === "stream";
const sizeNames = Object.keys(promptSizes).join("|");

/**
 * A plan's text as a dialect, a mode, a concurrency and a size (undefined: none given), or undefined when it
 * has fewer than two parts or more than four. Three parts are a dialect's plan when the first is not a mode
 * (`responses:buffered:10`), else a chat plan with a size (`buffered:10:64k`).
 */
function planParts(text: string): [string, string, string, string | undefined] | undefined {
  const parts = text.trim().split(":");
  const [first = "", second = "", third = "", fourth = ""] = parts;
  if (parts.length === 2) return ["chat", first, second, undefined];
  if (parts.length === 3) return isMode(first) ? ["chat", first, second, third] : [first, second, third, undefined];
  if (parts.length === 4) return [first, second, third, fourth];
  return undefined;
}

/**
 * One plan from its text (`buffered:10`, `chat:stream:1`, `responses:buffered:10`, `embeddings:buffered:10`,
 * `stream:10:256k`); throws on other text, on a streamed plan of a dialect without streams
 * (`embeddings:stream:10`), and on a size given to a plan of another dialect than chat.
 */
export function parsePlan(text: string): ChatPlan {
  const [dialect, mode, concurrency, size] = planParts(text) ?? [];
  const count = Number(concurrency);
  const prompt = size !== undefined && isPromptSize(size) ? size : undefined;
  if (!dialect || !isDialect(dialect) || !isMode(mode) || !Number.isInteger(count) || count < 1 || prompt !== size) {
    throw new Error(`BENCH_CHAT_PLANS: bad plan ${text} (expected [${dialects.join("|")}:]buffered|stream:<concurrency>[:${sizeNames}])`);
  }
  if (mode === "stream" && !streams(dialect)) {
    throw new Error(`BENCH_CHAT_PLANS: bad plan ${text} (the ${apiNames[dialect]} API answers in one body: only ${dialect}:buffered:<concurrency>)`);
  }
  if (prompt && dialect !== "chat") {
    throw new Error(`BENCH_CHAT_PLANS: bad plan ${text} (a prompt size is for chat plans only: [chat:]buffered|stream:<concurrency>:${sizeNames})`);
  }
  return { dialect, stream: mode === "stream", concurrency: count, ...(prompt && { prompt }) };
}

/** Plans as a comma-separated list (`buffered:1,responses:stream:10`). */
export const parsePlans = (text: string): ChatPlan[] => text.split(",").map(parsePlan);

/**
 * What a plan of another dialect than chat is held against: chat completions of the one-message body at its mode
 * and concurrency, measured in its own rounds (undefined for chat plans). The VM's speed moves by a third within
 * minutes, so a chat plan's row, measured minutes earlier, decides whether a dialect is within 10% of chat's
 * by when it ran.
 */
export const pairedChat = (plan: ChatPlan): ChatPlan | undefined =>
  plan.dialect === "chat" ? undefined : { dialect: "chat", stream: plan.stream, concurrency: plan.concurrency };

export const planMode = (plan: Pick<ChatPlan, "stream">) => (plan.stream ? "stream" : "buffered");

/** The plan as it is written: `buffered:10`, `responses:stream:10`, `buffered:10:64k` (chat without its prefix). */
export const planLabel = (plan: ChatPlan) =>
  `${plan.dialect === "chat" ? "" : `${plan.dialect}:`}${planMode(plan)}:${plan.concurrency}${plan.prompt ? `:${plan.prompt}` : ""}`;

const switchyardTargets = ["standalone", "standalone-pg", "topology", "baseline"];

/**
 * The targets each dialect other than chat runs against (chat runs against all). Responses: Switchyard's only,
 * as the upstream does not speak it and Portkey is called on its chat route. Messages: Switchyard's, and
 * direct calls and the bare proxy, since the upstream answers Anthropic's `/messages` itself (what
 * Switchyard's Anthropic endpoint calls). Embeddings: the same, since the upstream answers `/embeddings`
 * itself (what Switchyard's `openai-compatible` endpoint calls).
 */
export const dialectTargets: Record<Exclude<Dialect, "chat">, readonly string[]> = {
  responses: switchyardTargets,
  messages: ["direct", "proxy", ...switchyardTargets],
  embeddings: ["direct", "proxy", ...switchyardTargets],
};

/** Whether a plan of `dialect` runs against the target named `target`. */
export const servesDialect = (target: string, dialect: Dialect) => dialect === "chat" || dialectTargets[dialect].includes(target);

/** For the printed header: which of `targets` each non-chat dialect among `plans` skips, e.g. `responses plans skip direct, portkey (...)`. */
export function skippedTargets(plans: readonly ChatPlan[], targets: readonly string[]): string[] {
  const used = dialects.filter((dialect) => dialect !== "chat" && plans.some((plan) => plan.dialect === dialect));
  return used.flatMap((dialect) => {
    const skipped = targets.filter((target) => !servesDialect(target, dialect));
    if (!skipped.length) return [];
    const served = targets.filter((target) => servesDialect(target, dialect));
    const where = served.length ? `only on ${served.join(", ")}` : "on none of them";
    return [`${dialect} plans skip ${skipped.join(", ")} (the ${apiNames[dialect]} API is called ${where})`];
  });
}
