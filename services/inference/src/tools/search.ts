import { postJson, readAnswer, send, withTimeout } from "@switchyard/upstream";
import { z } from "zod";

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** Where web searches go; the operator chooses one with WEB_SEARCH_KIND and WEB_SEARCH_URL. */
export interface SearchBackend {
  search(query: string, options: { maxResults: number; signal: AbortSignal }): Promise<SearchResult[]>;
}

export interface SearchConfig {
  WEB_SEARCH_KIND: "searxng" | "json";
  WEB_SEARCH_URL?: string | undefined;
  WEB_SEARCH_API_KEY?: string | undefined;
  WEB_SEARCH_TIMEOUT_MS: number;
}

const searxngAnswer = z.object({ results: z.array(z.looseObject({ title: z.string().default(""), url: z.string(), content: z.string().default("") })) });
const jsonAnswer = z.object({ results: z.array(z.looseObject({ title: z.string().default(""), url: z.string(), snippet: z.string().default("") })) });

/**
 * The backend is the operator's own (often on a private network), so it is called directly, not through
 * the address-vetting fetch that guards URLs from requests.
 * `searxng`: a SearXNG instance's JSON API (`GET /search?q=…&format=json`), the usual self-hosted choice.
 * `json`: a service of your own answering `POST <url>` `{query, max_results}` with `{results: [{title, url, snippet}]}`.
 */
export function searchBackend(config: SearchConfig): SearchBackend | undefined {
  const base = config.WEB_SEARCH_URL;
  if (!base) return undefined;
  const headers: Record<string, string> = config.WEB_SEARCH_API_KEY ? { authorization: `Bearer ${config.WEB_SEARCH_API_KEY}` } : {};
  return {
    search: (query, { maxResults, signal }) =>
      withTimeout(signal, config.WEB_SEARCH_TIMEOUT_MS, async (deadline) => {
        if (config.WEB_SEARCH_KIND === "searxng") {
          const url = new URL("search", base.endsWith("/") ? base : `${base}/`);
          url.searchParams.set("q", query);
          url.searchParams.set("format", "json");
          const answer = searxngAnswer.parse(await readAnswer("web search", await send("web search", "GET", url.toString(), { accept: "application/json", ...headers }, undefined, deadline), deadline));
          return answer.results.slice(0, maxResults).map((r) => ({ title: r.title, url: r.url, snippet: r.content }));
        }
        const answer = jsonAnswer.parse(await readAnswer("web search", await postJson("web search", base, headers, { query, max_results: maxResults }, deadline), deadline));
        return answer.results.slice(0, maxResults);
      }),
  };
}
