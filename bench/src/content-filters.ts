import { builtinLabels, contentFilterBuiltinSlug } from "@switchyard/contracts";
import { compileFilters, scanText, type CompiledFilters, type FilterRule } from "@switchyard/upstream";
import { benchConfig } from "./config.js";

/**
 * CPU cost of content filters on an 8 KB prompt: no filters, every builtin (a prompt without personal data,
 * and one with some), each builtin alone, and five workspace patterns on re2js. Prints µs of CPU (user +
 * system, process.cpuUsage: the whole process, so V8's background threads count too) per scan, the median of
 * several rounds of many scans after a warm-up. Prints, never asserts.
 */

const { rounds, iterations, warmup } = benchConfig.contentFilters;
const size = 8192;

const prose = [
  "We are migrating our billing service from a monolith to three smaller services, and I would like a review of the plan before the team commits to it.",
  "The current system handles about 1,200 requests per second at peak, with a p99 latency of 340 ms, and most of that time is spent waiting on the database.",
  "In 2023 we tried a read replica, which cut the load on the primary by 40% but introduced stale reads that confused customers looking at their invoices.",
  "Our product manager, who joined the team in March, wants the new design to support monthly and yearly plans, prorated upgrades and refunds within 30 days.",
  "Please keep the answer practical: we run on Kubernetes 1.29 with Postgres 16, deploy twice a day, and have a budget of roughly $4,500 per month for infrastructure.",
  "The old code base is written in TypeScript, version 5.4, and it has about 85% test coverage, although many tests mock the database and miss real failures.",
  "One open question is whether the ledger should be append-only; accounting says yes, but support wants to correct mistakes without writing compensating entries.",
  "Another is how to roll out the change: a feature flag per workspace, a shadow mode that compares results, or a hard switch on a quiet Sunday at 02:00 UTC.",
  "We also need to keep the audit log for seven years, and the system prompt we use for the support assistant must explain the refund rules in plain words.",
  "If something in the plan seems risky, say so directly, and suggest what to measure first; we can spend two sprints on groundwork before the first cut-over.",
];

const code = `
\`\`\`ts
@Injectable()
export class InvoiceService {
  constructor(private readonly db: Database, private readonly clock: Clock) {}

  async totalFor(workspaceId: string, month: string): Promise<number> {
    const rows = await this.db.query<{ amount: string }>(
      "SELECT amount FROM invoice_lines WHERE workspace_id = $1 AND month = $2",
      [workspaceId, month],
    );
    // amounts are stored as strings of cents, e.g. "129999" for 1299.99
    return rows.reduce((sum, row) => sum + Number(row.amount), 0) / 100;
  }
}
\`\`\`
config:
  retries: 3
  timeout_ms: 2500
  url: https://billing.internal.example/api/v2
`;

const pii = [
  "You can reach me at maria.lopez@example.com or on +1 415 555 2671 if anything is unclear.",
  "The test customer is John Carter, card 4111 1111 1111 1111, SSN 123-45-6789, billed at 350 5th Ave, Suite 200, New York, NY 10118.",
  "The staging database listens on 10.20.30.40 and the old key AKIAIOSFODNN7EXAMPLE was rotated last week.",
];

/** Prose, a code block and numbers repeated to `size` characters; with `withPii`, three sentences carry personal data. */
function prompt(withPii: boolean): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < size; i++) {
    const part = i % 12 === 5 ? code : prose[i % prose.length]!;
    parts.push(part);
    length += part.length + 1;
  }
  if (withPii) pii.forEach((sentence, i) => parts.splice(3 + i * 9, 0, sentence));
  return parts.join(" ").slice(0, size);
}

const slugs = contentFilterBuiltinSlug.options;
const builtin = (slug: (typeof slugs)[number]): FilterRule => ({
  guardrailId: "g1",
  kind: "builtin",
  slug,
  action: "redact",
  label: builtinLabels[slug],
});
/** Workspace patterns as people write them: ticket ids, marked documents, passport-like numbers, account ids. */
const patterns = [
  String.raw`\bPROJ-\d{4,}\b`,
  "(?i)confidential",
  String.raw`\b[A-Z]{2}\d{6}\b`,
  "(?i)internal use only",
  "acct_[0-9a-f]{16}",
];
const patternRules = patterns.map((pattern): FilterRule => ({
  guardrailId: "g1",
  kind: "pattern",
  pattern,
  action: "redact",
  label: null,
}));

/** µs of process CPU per scan: the median of `rounds` rounds of `iterations` scans, after `warmup` scans. */
function measure(filters: CompiledFilters, text: string): { us: number; findings: number; changed: boolean } {
  let findings = 0;
  let changed = false;
  for (let i = 0; i < warmup; i++) scanText(filters, text, "user");
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) {
      const out = scanText(filters, text, "user");
      findings = out.findings.reduce((n, f) => n + f.count, 0);
      changed = out.text !== text;
    }
    const used = process.cpuUsage(start);
    perRound.push((used.user + used.system) / iterations);
  }
  perRound.sort((a, b) => a - b);
  return { us: perRound[rounds >> 1]!, findings, changed };
}

const clean = prompt(false);
const dirty = prompt(true);
const cases: [string, FilterRule[], string][] = [
  ["none set", [], clean],
  ["every builtin, no PII", slugs.map(builtin), clean],
  ["every builtin, some PII", slugs.map(builtin), dirty],
  ["5 custom re2js patterns", patternRules, clean],
  ...slugs.map((slug): [string, FilterRule[], string] => [`${slug} alone, no PII`, [builtin(slug)], clean]),
  ...slugs.map((slug): [string, FilterRule[], string] => [`${slug} alone, some PII`, [builtin(slug)], dirty]),
];

const settings = `per row the median of ${rounds} rounds of ${iterations} scans, after ${warmup} warm-up`;
console.log(`content filters: ${clean.length} / ${dirty.length} character prompts; ${settings}; Node ${process.version}`);
console.log("| case | µs CPU per scan | matches | text changed |");
console.log("|---|---|---|---|");
for (const [name, rules, text] of cases) {
  const r = measure(compileFilters(rules), text);
  console.log(`| ${name} | ${r.us.toFixed(2)} | ${r.findings} | ${r.changed ? "yes" : "no"} |`);
}
