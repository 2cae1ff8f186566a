import { createHash } from "node:crypto";
import type { ResponsesNamespaceTool, ResponsesRequest } from "@switchyard/contracts";

type Tool = NonNullable<ResponsesRequest["tools"]>[number];

/** Whether a tool is a namespace tool. */
export const isNamespace = (tool: Tool): tool is ResponsesNamespaceTool => tool.type === "namespace";

/** A function of a namespace tool, as the client names it. */
export interface Namespaced {
  namespace: string;
  name: string;
}

/** The namespaced functions of one request, by the name chat gives each. */
export type NamespacedNames = ReadonlyMap<string, Namespaced>;

const chatNameRule = /^[a-zA-Z0-9_-]{1,64}$/;

/** `<namespace>__<name>`, or when that breaks chat's name rules, its legal characters cut short with a hash of the pair. */
function flatName({ namespace, name }: Namespaced): string {
  const plain = `${namespace}__${name}`;
  if (chatNameRule.test(plain)) return plain;
  const hash = createHash("sha256").update(`${namespace}\0${name}`).digest("hex").slice(0, 8);
  return `${plain.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 55)}_${hash}`;
}

/** A name no other tool of the request has: the flat name, hashed when taken, numbered when that is taken too. */
function uniqueName(fn: Namespaced, taken: Set<string>): string {
  let name = flatName(fn);
  if (taken.has(name)) {
    const hash = createHash("sha256").update(`${fn.namespace}\0${fn.name}\0taken`).digest("hex").slice(0, 8);
    name = `${name.slice(0, 55)}_${hash}`;
  }
  for (let n = 2; taken.has(name); n++) name = `${name.slice(0, 60)}_${n}`;
  taken.add(name);
  return name;
}

/**
 * Each function of the request's namespace tools by the chat function name it is sent as, unique among
 * the request's tools. The request and its answer both read it, so the names agree.
 */
export function namespacedNames(tools: ResponsesRequest["tools"]): Map<string, Namespaced> {
  const names = new Map<string, Namespaced>();
  const taken = new Set<string>();
  for (const tool of tools ?? []) if (tool.type === "function" && typeof tool.name === "string") taken.add(tool.name);
  for (const tool of (tools ?? []).filter(isNamespace)) {
    for (const fn of tool.tools) names.set(uniqueName({ namespace: tool.name, name: fn.name }, taken), { namespace: tool.name, name: fn.name });
  }
  return names;
}

/** The chat name of a namespaced function: the request's own, else the name it would be sent as alone. */
export function chatNameOf(names: NamespacedNames, fn: Namespaced): string {
  for (const [chatName, known] of names) if (known.namespace === fn.namespace && known.name === fn.name) return chatName;
  return flatName(fn);
}

/** A called function as the client names it: its own name, with its namespace when it has one. */
export function clientName(names: NamespacedNames, chatName: string): { name: string; namespace?: string } {
  const fn = names.get(chatName);
  return fn ? { name: fn.name, namespace: fn.namespace } : { name: chatName };
}
