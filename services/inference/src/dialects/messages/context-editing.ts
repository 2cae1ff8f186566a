import type { MessagesCountTokensRequest } from "@switchyard/contracts";

type Turn = MessagesCountTokensRequest["messages"][number];

const thinkingTypes = new Set(["thinking", "redacted_thinking"]);
const holdsThinking = (turn: Turn): boolean => turn.role === "assistant" && Array.isArray(turn.content) && turn.content.some((b) => thinkingTypes.has(b.type));

/**
 * The assistant turns whose thinking `context_management` keeps, when its only edit is Anthropic's thinking
 * clearing (`clear_thinking_20251015`), which the gateway applies to a translation itself: `"all"`, or the
 * last `value` turns that hold thinking (`{"type": "thinking_turns", "value"}`). Undefined for other edits
 * (tool result clearing needs Anthropic's own token counts), which only Anthropic endpoints carry.
 */
export function thinkingTurnsKept(contextManagement: unknown): number | "all" | undefined {
  const edits = (contextManagement as { edits?: unknown } | null)?.edits;
  if (!Array.isArray(edits) || edits.length !== 1) return undefined;
  const edit = edits[0] as { type?: unknown; keep?: unknown } | null;
  if (edit?.type !== "clear_thinking_20251015" || Object.keys(edit).some((key) => key !== "type" && key !== "keep")) return undefined;
  if (edit.keep === "all") return "all";
  const keep = edit.keep as { type?: unknown; value?: unknown } | null | undefined;
  if (keep?.type !== "thinking_turns" || Object.keys(keep).length !== 2) return undefined;
  return Number.isSafeInteger(keep.value) && (keep.value as number) >= 0 ? (keep.value as number) : undefined;
}

/** The turns with the thinking blocks of all but the last `kept` assistant turns that hold thinking left out. */
export function clearedThinking(turns: readonly Turn[], kept: number | "all"): Turn[] {
  if (kept === "all") return [...turns];
  const thinking = turns.flatMap((turn, i) => (holdsThinking(turn) ? [i] : []));
  const cleared = new Set(thinking.slice(0, Math.max(0, thinking.length - kept)));
  return turns.map((turn, i) => (cleared.has(i) && Array.isArray(turn.content) ? ({ ...turn, content: turn.content.filter((b) => !thinkingTypes.has(b.type)) } as Turn) : turn));
}
