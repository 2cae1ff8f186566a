import { promptSizes, type PromptSize } from "./plans.js";

/**
 * The large conversations of the chat plans with a prompt size: what a coding agent sends on a long task.
 * A system prompt, then user and assistant turns in alternation (the user's asks, test output and code to
 * review; the assistant's explanations with TypeScript, SQL and diffs), ending with a user turn that pastes a
 * CI log. Fixed text with the turn's number and module filled in, so every run and every target sends the
 * same bytes.
 */

/** One message of a chat completions conversation. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

const systemPrompt = `You are a coding agent working in the user's repository, a TypeScript monorepo of HTTP services on
Node 20 with Postgres. You read files, run commands and edit code through the tools you are given.

Rules:
- Read the code around a change before you make it; follow the conventions you find (names, error
  handling, how modules export their functions, how tests are written).
- Keep changes small and focused on what the user asked. Do not rename or move files unless asked.
- Every change to behaviour comes with a test that fails without it. Run the tests of the package you
  changed, and the type checker, before you say you are done.
- Never print secrets. Never run commands that delete data outside the repository.
- SQL: parameterized queries only; migrations are forward-only and must not lock large tables for long.
- When something is unclear, say what you assumed.
- Answer in plain prose, short paragraphs, with code in fenced blocks that name their language.

The repository: services/* (one folder per service: src/, test files beside the code), libs/* (shared
code), scripts/ (development tools). Tests run with vitest; lint with eslint; formatting with prettier at
a line width of 140. Each service reads its configuration once, in src/config.ts, from the environment.`;

const modules = ["billing", "invoices", "ledger", "webhooks", "sessions", "exports", "search", "quotas", "audit", "reports", "uploads", "alerts", "members"];
const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1);

/** What turn `i` is about: its module, the module capitalised, and the turn's number from 1. */
const turnWords = (i: number) => {
  const m = modules[(i * 5) % modules.length]!;
  return { m, M: capital(m), n: i + 1 };
};

/** The user's turn `i`: four kinds in turn, about the module of the turn. */
function userTurn(i: number): string {
  const { m, M, n } = turnWords(i);
  switch (i % 4) {
    case 0:
      return `The ${m} tests fail since the last change. Here is the output:

\`\`\`
 FAIL  services/${m}/src/${m}.test.ts > ${m} totals > sums the lines of one period
AssertionError: expected ${n}2040 to be ${n}2050 // Object.is equality
 > services/${m}/src/${m}.test.ts:${40 + n}:27
     ${38 + n}|     const lines = await list${M}Lines(db, period);
     ${39 + n}|     const total = sum${M}(lines);
     ${40 + n}|     expect(total).toBe(${n}2050);
       |                   ^
 Test Files  1 failed | ${n + 11} passed (${n + 12})
      Tests  1 failed | ${n * 3 + 40} passed (${n * 3 + 41})
\`\`\`

Can you find out why and fix it? Keep the exported function signatures as they are; other services call them.`;
    case 1:
      return `Now add a \`list${M}\` function to services/${m}/src/service.ts that pages through the records by cursor,
50 a page, newest first. It takes the organization id and an optional cursor and returns the page and the
next cursor (null after the last page). Follow what services/invoices/src/service.ts does for its list, and
add tests for the first page, a middle page, the last page and a cursor of another organization. The
ticket is ENG-${1200 + n}.`;
    case 2:
      return `That works, thanks. Next, the ${m} route: it should answer 404 when the record belongs to another
workspace, not 403, so that ids of other workspaces do not leak. This is the handler now, at line ${n * 3 + 20}
of services/${m}/src/routes.ts:

\`\`\`ts
router.get("/${m}/:id", async (req, res) => {
  const caller = callerOf(req);
  const record = await get${M}(deps.db, req.params.id);
  if (!record) return res.status(404).json({ error: { code: 404, message: "not found" } });
  if (record.workspace_id !== caller.workspaceId) return res.status(403).json({ error: { code: 403, message: "forbidden" } });
  res.json({ data: to${M}Record(record) });
});
\`\`\``;
    default:
      return `Please review this migration for ${m} before I run it on staging, where the table has about ${n * 40} thousand
rows and takes writes all the time:

\`\`\`sql
ALTER TABLE ${m} ADD COLUMN workspace_id uuid;
UPDATE ${m} SET workspace_id = k.workspace_id FROM api_keys k WHERE k.id = ${m}.api_key_id;
ALTER TABLE ${m} ALTER COLUMN workspace_id SET NOT NULL;
CREATE INDEX ${m}_workspace_created ON ${m} (workspace_id, created_at DESC);
\`\`\``;
  }
}

/** The assistant's answer to the user's turn `i`. */
function assistantTurn(i: number): string {
  const { m, M, n } = turnWords(i);
  switch (i % 4) {
    case 0:
      return `The test sums the lines of the period, but \`list${M}Lines\` now takes the period's end as inclusive, so a
line written exactly at midnight of the next period is counted twice. I changed the query to a half-open
range, which is what the other lists do, and added a test with a line at the boundary.

\`\`\`ts
export async function list${M}Lines(db: Queryable, period: Period): Promise<${M}Line[]> {
  const rows = await db.query<${M}LineRow>(
    \`SELECT id, amount, created_at FROM ${m}_lines
      WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
      ORDER BY created_at, id\`,
    [period.organizationId, period.start, period.end],
  );
  return rows.map(to${M}Line);
}
\`\`\`

The ${m} tests pass now (${n * 3 + 42} tests), and so does the type check.`;
    case 1:
      return `Added \`list${M}\`. The cursor is the last record's \`(created_at, id)\`, encoded as base64url JSON, so two
records of the same millisecond never repeat or go missing across pages; a cursor of another organization
finds nothing and gives an empty page rather than an error.

\`\`\`ts
export async function list${M}(db: Queryable, organizationId: string, cursor?: string): Promise<Page<${M}Record>> {
  const after = cursor ? decodeCursor(cursor) : undefined;
  const rows = await db.query<${M}Row>(
    \`SELECT * FROM ${m} WHERE organization_id = $1
      AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
      ORDER BY created_at DESC, id DESC LIMIT 51\`,
    [organizationId, after?.createdAt ?? null, after?.id ?? null],
  );
  const page = rows.slice(0, 50).map(to${M}Record);
  const last = rows.length > 50 ? rows[49] : undefined;
  return { data: page, next: last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
}
\`\`\`

Four new tests in services/${m}/src/service.test.ts cover the pages you listed; all ${n + 60} tests pass.`;
    case 2:
      return `Changed. The record is now looked up within the caller's workspace, so one of another workspace is simply not
found, and the two cases cannot be told apart by status or timing:

\`\`\`diff
-  const record = await get${M}(deps.db, req.params.id);
-  if (!record) return res.status(404).json({ error: { code: 404, message: "not found" } });
-  if (record.workspace_id !== caller.workspaceId) return res.status(403).json({ error: { code: 403, message: "forbidden" } });
+  const record = await get${M}(deps.db, req.params.id, caller.workspaceId);
+  if (!record) return res.status(404).json({ error: { code: 404, message: "not found" } });
\`\`\`

\`get${M}\` gained the workspace id as a third parameter and a \`AND workspace_id = $2\` in its query; its other
caller, the export job, passes the job's workspace. The route test for another workspace now expects 404;
the ${n + 70} tests of the package pass.`;
    default:
      return `Two problems for a table that takes writes all the time:

1. \`UPDATE ${m} SET ...\` rewrites all ${n * 40} thousand rows in one transaction and holds their row locks until
   it commits; writers wait behind it. Backfill in batches of a few thousand ids instead.
2. \`CREATE INDEX\` without \`CONCURRENTLY\` blocks writes for as long as the build takes.

\`\`\`sql
ALTER TABLE ${m} ADD COLUMN workspace_id uuid;
-- repeat until it updates no rows:
UPDATE ${m} SET workspace_id = k.workspace_id FROM api_keys k
 WHERE k.id = ${m}.api_key_id AND ${m}.id IN (SELECT id FROM ${m} WHERE workspace_id IS NULL LIMIT 5000);
CREATE INDEX CONCURRENTLY ${m}_workspace_created ON ${m} (workspace_id, created_at DESC);
ALTER TABLE ${m} ADD CONSTRAINT ${m}_workspace_set CHECK (workspace_id IS NOT NULL) NOT VALID;
ALTER TABLE ${m} VALIDATE CONSTRAINT ${m}_workspace_set;
\`\`\`

The NOT VALID check and its validation stand in for SET NOT NULL without a long lock.`;
  }
}

/** Line `i` of the closing turn's CI log. */
const logLine = (i: number) => {
  const m = modules[i % modules.length]!;
  return `  ok ${i + 1} - services/${m}/src/${m}.test.ts > ${m} case ${(i * 7) % 97} (${(i * 13) % 41} ms)`;
};

/** The closing user turn: a CI log of as many lines as fit in `room` bytes of JSON (the message object's). */
function closingTurn(room: number): ChatMessage {
  const turn = (lines: string[]): ChatMessage => ({
    role: "user",
    content: `Here is the log of the last CI run, in case it helps:\n\n\`\`\`\n${lines.join("\n")}\n\`\`\`\n\nWhat should I look at first?`,
  });
  const lines: string[] = [];
  while (jsonBytes(turn([...lines, logLine(lines.length)])) <= room) lines.push(logLine(lines.length));
  return turn(lines);
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

/** The JSON of a chat body around its messages (`{"model":"bench/model","messages":[],"stream":false}`). */
const envelopeBytes = jsonBytes({ model: "bench/model", messages: [], stream: false });

/**
 * A conversation whose chat completions body (`{model, messages, stream}`) is `kib` KiB: the system prompt,
 * as many user and assistant turns as fit, and the closing user turn's log filling the rest to a line.
 */
export function buildConversation(kib: number): ChatMessage[] {
  const target = kib * 1024 - envelopeBytes;
  const messages: ChatMessage[] = [{ role: "system", content: systemPrompt }];
  // The messages' array: its brackets, each message, a comma between two.
  let bytes = 2 + jsonBytes(messages[0]);
  const smallestClosing = jsonBytes(closingTurn(0)) + 1;
  for (let i = 0; ; i++) {
    const pair: ChatMessage[] = [
      { role: "user", content: userTurn(i) },
      { role: "assistant", content: assistantTurn(i) },
    ];
    const added = jsonBytes(pair[0]) + jsonBytes(pair[1]) + 2;
    if (bytes + added + smallestClosing > target) break;
    messages.push(...pair);
    bytes += added;
  }
  messages.push(closingTurn(target - bytes - 1));
  return messages;
}

const built = new Map<PromptSize, readonly ChatMessage[]>();

/** The conversation of a prompt size, built on first use and kept. */
export function conversation(size: PromptSize): readonly ChatMessage[] {
  let messages = built.get(size);
  if (!messages) {
    messages = buildConversation(promptSizes[size]);
    built.set(size, messages);
  }
  return messages;
}
