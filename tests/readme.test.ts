import { execFile } from "node:child_process";
import { readFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverNodeFlags } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "./support/config.js";
import { startFakeAnthropic, greeting as anthropicGreeting, type FakeAnthropic } from "./support/fake-anthropic.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFakeResponses, type FakeResponses } from "./support/fake-responses.js";
import { freePort, repoRoot, startProcess, type TestProcess } from "./support/process.js";

/**
 * The README's shell blocks, run in order with bash as a reader runs them on a fresh clone, against the
 * built gateway and fake OpenAI and Anthropic servers. Two blocks are replaced by what they do, because a
 * test cannot run them as written: `npm ci && npm start` becomes the built standalone entry point (what
 * `npm start` runs after building), and `npm ci && npm test` is this very suite. Every other block runs as
 * written, except that the lines the README asks the reader to fill in (`export NAME=…`) get the value the
 * README says to take, and the port 8080 becomes the test's own. A block this file does not know fails the
 * test, so the README cannot gain a command nobody runs.
 */

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

interface State {
  managementKey: string;
  /** The output of the block run just before. */
  previous: string;
}

/** How to check one block's output, chosen by what the block says. */
interface KnownBlock {
  name: string;
  matches: RegExp;
  check(output: string): void;
  /** Run again until the check passes (the README says the result shows "a moment after"). */
  settles?: boolean;
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown> & { data?: Record<string, unknown> };
/** curl prints each answer without a newline after it: the JSON objects of one output, in order. */
function jsonObjects(text: string): Array<ReturnType<typeof json>> {
  const found: Array<ReturnType<typeof json>> = [];
  let depth = 0;
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "{" && depth++ === 0) start = i;
    else if (c === "}" && --depth === 0) found.push(json(text.slice(start, i + 1)));
  }
  return found;
}
const noErrors = (output: string) => expect(output).not.toMatch(/"error"\s*:\s*\{/);
const chatAnswer = "Hello from openai";

const known: KnownBlock[] = [
  { name: "the API's address and the management key", matches: /^export SY=.*\nexport MGMT=/, check: (out) => expect(out).toBe("") },
  {
    name: "create an inference key",
    matches: /-X POST \$SY\/keys /,
    check: (out) => {
      const made = json(out);
      expect(made.key).toMatch(/^sk-sy-v1-/);
      expect(made.data).toMatchObject({ name: "my app", limit: 10, limit_reset: "monthly" });
    },
  },
  { name: "keep the key and its hash", matches: /^export KEY=.*\nexport HASH=/, check: (out) => expect(out).toBe("") },
  { name: "the calling key's record", matches: /^curl -s \$SY\/key -H "Authorization: Bearer \$KEY"$/, check: (out) => expect(typeof json(out).data?.label).toBe("string") },
  {
    name: "list, read and update keys",
    matches: /\$SY\/keys\?limit=50/,
    check: (out) => {
      noErrors(out);
      expect(out).toContain('"name":"renamed"');
      expect(out).toContain('"limit_reset":"weekly"');
    },
  },
  {
    name: "chat, buffered and streamed",
    matches: /\$SY\/chat\/completions .*\n.*\n.*\n.*curl -sN \$SY\/chat\/completions/,
    check: (out) => {
      noErrors(out);
      const buffered = json(out.slice(0, out.search(/: OPENROUTER|data: /)));
      expect(buffered).toMatchObject({ object: "chat.completion", choices: [{ message: { content: chatAnswer } }] });
      expect(buffered.openrouter_metadata).toBeInstanceOf(Object);
      expect((buffered.usage as { cost: number }).cost).toBeGreaterThan(0);
      expect(out).toContain(`"content":"Hello`);
      expect(out.trimEnd().endsWith("data: [DONE]")).toBe(true);
    },
  },
  {
    name: "chat through @openrouter/sdk and openai",
    matches: /^node --input-type=module <<'EOF'\nimport \{ OpenRouter \} from "@openrouter\/sdk";[\s\S]*import OpenAI from "openai";/,
    check: (out) => {
      const lines = out.trimEnd().split("\n");
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        const match = /^(.*) - cost: (\S+)$/.exec(line);
        expect(match?.[1]).toBe(chatAnswer);
        expect(Number(match?.[2])).toBeGreaterThan(0);
      }
    },
  },
  {
    name: "the Responses and Messages dialects",
    matches: /\$SY\/responses [\s\S]*\$SY\/messages /,
    check: (out) => {
      noErrors(out);
      expect(out).toContain("Hello from the fake Responses server.");
      expect(out).toContain(anthropicGreeting);
    },
  },
  {
    name: "generations and daily spend",
    matches: /\$SY\/generations\?limit=5[\s\S]*\$SY\/activity\/daily/,
    settles: true,
    check: (out) => {
      noErrors(out);
      const [generations, daily] = jsonObjects(out);
      const rows = generations!.data as unknown as Array<{ status: string; cost: number }>;
      // Four chats, one Responses and one Messages request: the newest five, each priced.
      expect(rows).toHaveLength(5);
      for (const row of rows) expect([row.status, typeof row.cost]).toEqual(["completed", "number"]);
      expect(rows.every((row) => row.cost > 0)).toBe(true);
      const days = daily!.data as unknown as Array<{ group: string; requests: number; usage: number }>;
      const mini = days.find((day) => day.group === "openai/gpt-4o-mini");
      expect([mini?.requests, typeof mini?.usage]).toEqual([5, "number"]);
      expect(days.find((day) => day.group === "anthropic/claude-sonnet-4.5")?.requests).toBe(1);
    },
  },
];

/** Where each value the README asks the reader to fill in comes from, as the README says. */
const fills: Record<string, (state: State) => string> = {
  MGMT: (state) => state.managementKey,
  KEY: (state) => String(json(state.previous).key),
  HASH: (state) => String(json(state.previous).data?.hash),
};

const blocks = async () => {
  const readme = await readFile(join(repoRoot, "README.md"), "utf8");
  return [...readme.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map((match) => match[1]!.trimEnd());
};

let dir: string;
let envFile: string;
let gateway: TestProcess | undefined;
let openai: FakeProvider;
let responses: FakeResponses;
let anthropic: FakeAnthropic;
let front: Server;

/** OpenAI's chat and Responses APIs on one base URL, as api.openai.com serves them. */
async function startFakeOpenAi(): Promise<string> {
  const chat = new URL(openai.baseUrl);
  const resp = new URL(responses.baseUrl);
  front = createServer((req, res) => {
    const target = req.url === "/v1/responses" ? resp : chat;
    const upstream = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}/v1`;
}

const bash = (script: string) =>
  new Promise<Run>((resolve) => {
    execFile("bash", ["-c", script], { cwd: repoRoot, env: { PATH: testEnv.path, HOME: dir }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ stdout, stderr, code: error ? Number(error.code ?? 1) : 0 }),
    );
  });

/** Runs until it passes or 15 s went by, then fails as its last run did. */
async function settled<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-readme-"));
  envFile = join(dir, "env.sh");
  await writeFile(envFile, "");
  openai = await startFakeProvider("openai", () => "ok");
  responses = await startFakeResponses();
  anthropic = await startFakeAnthropic();
});
afterAll(async () => {
  await gateway?.stop();
  await new Promise((resolve) => front?.close(resolve));
  await Promise.all([openai?.stop(), responses?.stop(), anthropic?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("README.md", () => {
  it("runs every shell block in order on a fresh data folder and gets what it says", async () => {
    const all = await blocks();
    expect(all.length).toBeGreaterThan(5);
    const port = await freePort();
    const state: State = { managementKey: "", previous: "" };
    const ran: string[] = [];
    for (const [index, block] of all.entries()) {
      const where = `README block ${index + 1}:\n${block}\n`;
      if (block === "npm ci && npm test") continue; // this suite itself
      if (block === "npm ci && npm start") {
        // What `npm start` runs once built (`startProcess` gives it the same flags), with a provider key and base
        // URLs the README's chat section names.
        const { scripts } = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
        expect(scripts.start!.split(" && ").at(-1)).toBe(["node", ...serverNodeFlags, "services/standalone/dist/main.js"].join(" "));
        gateway = startProcess("services/standalone/dist/main.js", {
          PORT: String(port),
          SWITCHYARD_DATA_DIR: join(dir, ".switchyard"),
          OPENAI_API_KEY: "sk-openai-readme",
          OPENAI_BASE_URL: await startFakeOpenAi(),
          ANTHROPIC_API_KEY: "sk-ant-readme",
          ANTHROPIC_BASE_URL: anthropic.baseUrl,
        });
        state.managementKey = (await gateway.waitFor(/^Switchyard bootstrap: a management key was created\. It is shown only this once:\n\n {2}(sk-sy-v1-\S+)$/m, 60_000))[1]!;
        await gateway.waitFor(/"port":\d+/, 30_000);
        continue;
      }
      const recognised = known.find((entry) => entry.matches.test(block));
      if (!recognised) throw new Error(`${where}is new to tests/readme.test.ts: teach it how to run and check the block`);
      const script = block
        .replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`)
        .replace(/^export (\w+)=(\S*…\S*)(.*)$/gm, (_line, name: string) => {
          const fill = fills[name];
          if (!fill) throw new Error(`${where}asks the reader to set ${name}; tests/readme.test.ts does not know where its value comes from`);
          return `export ${name}='${fill(state)}'`;
        });
      expect(script, where).not.toContain("…");
      const run = async () => {
        const result = await bash(`set -eo pipefail\nsource '${envFile}'\n${script}\nexport -p > '${envFile}'`);
        expect(result, where).toMatchObject({ code: 0, stderr: "" });
        recognised.check(result.stdout);
        return result;
      };
      const result = recognised.settles ? await settled(run) : await run();
      state.previous = result.stdout;
      ran.push(recognised.name);
    }
    expect(gateway, "the README starts the gateway").toBeDefined();
    expect(ran, "each known block once, in the README's order").toEqual(known.map((entry) => entry.name));
    // The chats reached the fakes with the operator's provider keys, never the caller's.
    expect(openai.requests.map((r) => r.authorization)).toEqual(Array(4).fill("Bearer sk-openai-readme"));
    expect(responses.requests).toHaveLength(1);
    expect(anthropic.requests).toHaveLength(1);
  }, 240_000);
});
