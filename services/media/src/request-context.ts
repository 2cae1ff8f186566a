import { sessionIdHeader } from "@switchyard/contracts";
import type { IncomingHttpHeaders } from "node:http";

/** The characters a kept header is cut to: headers describe the caller, they are not its data. */
const headerChars = 1000;

/** Who asked, as the generation records it: the session, and the app of the headers. */
export interface Attribution {
  /** The body's `session_id`, else the `x-session-id` header. */
  sessionId: string | null;
  httpReferer: string | null;
  /** `X-Title`, or `X-OpenRouter-Title`. */
  appTitle: string | null;
  userAgent: string | null;
}

/** The attribution of a media request, as inference keeps it for chat. */
export function attributionOf(headers: IncomingHttpHeaders, sessionId: string | undefined): Attribution {
  const kept = (...names: string[]) => {
    for (const name of names) {
      const value = headers[name];
      if (typeof value === "string" && value) return value.slice(0, headerChars);
    }
    return null;
  };
  return {
    sessionId: sessionId ?? kept(sessionIdHeader),
    httpReferer: kept("http-referer", "referer"),
    appTitle: kept("x-title", "x-openrouter-title"),
    userAgent: kept("user-agent"),
  };
}
