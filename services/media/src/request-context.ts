import { appOf, sessionHeader } from "@switchyard/upstream";
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

/** The attribution of a media request, as inference keeps it for chat; a 400 for an `x-session-id` past the limit of `session_id`. */
export function attributionOf(headers: IncomingHttpHeaders, sessionId: string | undefined): Attribution {
  // The header is checked even when the body's session_id wins over it.
  const header = sessionHeader(headers);
  return { sessionId: sessionId ?? header ?? null, ...appOf(headers) };
}
