import { sessionIdHeader } from "@switchyard/contracts";
import { appOf, keptHeader } from "@switchyard/upstream";
import type { IncomingHttpHeaders } from "node:http";

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
export const attributionOf = (headers: IncomingHttpHeaders, sessionId: string | undefined): Attribution => ({
  sessionId: sessionId ?? keptHeader(headers, sessionIdHeader),
  ...appOf(headers),
});
