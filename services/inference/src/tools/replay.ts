import { serverToolCallType, type ServerToolCallDetail } from "@switchyard/contracts";
import { toolFunctionName } from "./declared.js";

type Message = Record<string, unknown>;
type Detail = Record<string, unknown> & { type: string };

const isCall = (d: Detail): d is Detail & ServerToolCallDetail => d.type === serverToolCallType;

/**
 * An answer's `reasoning_details` list each turn's reasoning, then the server tool calls that turn made;
 * the groups, in order: the reasoning before each round of calls with the round, and what follows the last.
 */
function rounds(details: Detail[]) {
  const out: Array<{ reasoning: Detail[]; calls: ServerToolCallDetail[] }> = [];
  let reasoning: Detail[] = [];
  let calls: ServerToolCallDetail[] = [];
  for (const d of details) {
    if (isCall(d)) {
      calls.push(d);
      continue;
    }
    if (calls.length > 0) {
      out.push({ reasoning, calls });
      reasoning = [];
      calls = [];
    }
    reasoning.push(d);
  }
  if (calls.length > 0 || reasoning.length > 0) out.push({ reasoning, calls });
  return out;
}

const asToolCall = (call: ServerToolCallDetail, n: number) => ({
  id: call.tool_call_id ?? call.id ?? `call_replayed_${n}`,
  type: "function",
  function: { name: toolFunctionName(call.tool_name), arguments: call.arguments },
});

/**
 * A conversation sent back with the server tool calls an earlier answer carried: each one becomes, for the
 * provider, the call the model made and the result it read, as in the turns that ran it. They are history;
 * nothing runs again. The answer's words come after the calls, as they did.
 */
export function replayServerCalls(messages: readonly Message[]): Message[] {
  let n = 0;
  return messages.flatMap((message): Message[] => {
    const details = message.reasoning_details as Detail[] | undefined;
    if (message.role !== "assistant" || !Array.isArray(details) || !details.some(isCall)) return [message];
    const { reasoning_details: _details, tool_calls: ownCalls, ...rest } = message;
    const own = Array.isArray(ownCalls) ? (ownCalls as unknown[]) : [];
    const groups = rounds(details);
    const tail = groups.at(-1)!.calls.length === 0 ? groups.pop()!.reasoning : [];
    // Calls with no reasoning after them, beside calls of the client's own, were the answer's last turn:
    // that turn keeps the words and the client's calls, whose results the conversation brings next.
    const endsWithOwn = tail.length === 0 && own.length > 0;
    const out: Message[] = [];
    groups.forEach((group, i) => {
      const calls = group.calls.map((c) => asToolCall(c, n++));
      const answerTurn = endsWithOwn && i === groups.length - 1;
      out.push({
        ...(answerTurn ? rest : { role: "assistant", content: null }),
        tool_calls: answerTurn ? [...calls, ...own] : calls,
        ...(group.reasoning.length ? { reasoning_details: group.reasoning } : {}),
      });
      group.calls.forEach((c, j) => out.push({ role: "tool", tool_call_id: calls[j]!.id, content: c.result }));
    });
    if (!endsWithOwn) out.push({ ...rest, ...(own.length ? { tool_calls: own } : {}), ...(tail.length ? { reasoning_details: tail } : {}) });
    return out;
  });
}
