import type { ChatCompletionRequest } from "@switchyard/contracts";
import { badRequest } from "@switchyard/runtime";
import { estimateTokens } from "./cost.js";

export interface ActivePlugins {
  /** Repair malformed JSON when a JSON response format was asked for (buffered responses). */
  responseHealing: boolean;
  /** Trim the middle of the conversation to fit the endpoint's context window. */
  contextCompression: boolean;
}

/** The `transforms` this gateway applies: middle-out, which context compression does. */
const knownTransforms = ["middle-out"];

/** `transforms` as OpenRouter takes them, an array of names; a value the gateway cannot apply is a 400 naming it. */
function transformsOf(transforms: unknown): string[] {
  if (transforms === undefined || transforms === null) return [];
  if (!Array.isArray(transforms)) throw badRequest(`Invalid body: transforms: must be an array of transform names, e.g. ["middle-out"]; known: ${knownTransforms.join(", ")}`);
  const unknown = transforms.filter((t) => typeof t !== "string" || !knownTransforms.includes(t));
  if (unknown.length) throw badRequest(`Invalid body: transforms: unknown transform ${unknown.map(String).join(", ")}; known: ${knownTransforms.join(", ")}`);
  return transforms as string[];
}

/** Plugin ids this gateway knows; anything else is a 400 rather than silently ignored. */
export function activePlugins(request: ChatCompletionRequest): ActivePlugins {
  const active: ActivePlugins = { responseHealing: false, contextCompression: false };
  for (const plugin of request.plugins ?? []) {
    if (plugin.enabled === false) continue;
    if (plugin.id === "response-healing") active.responseHealing = true;
    else if (plugin.id === "context-compression" || plugin.id === "middle-out") active.contextCompression = true;
    else if (plugin.id === "web") {
      throw badRequest(
        'Invalid body: plugins: the web plugin is not supported; for web search, add the server tool {"type": "openrouter:web_search"} to tools (it searches on the operator\'s backend, WEB_SEARCH_URL)',
      );
    } else throw badRequest(`Invalid body: plugins: unknown plugin id ${plugin.id}; known: response-healing, context-compression`);
  }
  if (transformsOf(request.transforms).includes("middle-out")) active.contextCompression = true;
  return active;
}

/**
 * Best-effort repair of almost-JSON a model produced: code fences, prose around the value, trailing
 * commas, and brackets or a string left open at the end. Returns undefined when it still does not parse.
 */
export function healJson(text: string): string | undefined {
  const parses = (candidate: string) => {
    try {
      JSON.parse(candidate);
      return true;
    } catch {
      return false;
    }
  };
  if (parses(text)) return text;
  let s = text.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "");
  const start = s.search(/[[{]/);
  if (start === -1) return undefined;
  s = s.slice(start);
  const end = Math.max(s.lastIndexOf("}"), s.lastIndexOf("]"));
  if (end !== -1 && parses(s.slice(0, end + 1))) return s.slice(0, end + 1);
  s = s.replace(/,\s*([}\]])/g, "$1");
  // Close whatever is still open, innermost first.
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") stack.pop();
  }
  let repaired = (inString ? `${s}"` : s).replace(/,\s*$/, "").replace(/:\s*$/, ": null");
  repaired += stack.reverse().join("");
  repaired = repaired.replace(/,\s*([}\]])/g, "$1");
  return parses(repaired) ? repaired : undefined;
}

type Message = Record<string, unknown>;
const sizeOf = (m: Message) => estimateTokens(JSON.stringify(m));

/**
 * Middle-out: keeps system messages, the first user message and the latest messages, and drops messages
 * from the middle of the conversation until the prompt fits `budgetTokens`.
 */
export function compressMessages(messages: Message[], budgetTokens: number): Message[] {
  let total = messages.reduce((sum, m) => sum + sizeOf(m), 0);
  if (total <= budgetTokens) return messages;
  const kept = [...messages];
  const firstUser = kept.findIndex((m) => m.role === "user");
  while (total > budgetTokens) {
    const removable = kept.map((m, i) => ({ m, i })).filter(({ m, i }) => m.role !== "system" && i !== firstUser && i < kept.length - 1);
    if (removable.length === 0) break;
    const { m, i } = removable[Math.floor(removable.length / 2)]!;
    kept.splice(i, 1);
    total -= sizeOf(m);
  }
  return kept;
}
