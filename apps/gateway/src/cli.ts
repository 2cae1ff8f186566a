import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkCatalogFile } from "@switchyard/catalog";
import { runStandalone } from "@switchyard/standalone";

/**
 * The `switchyard` command of the npm package. Its build bundles this file with the workspace's libraries
 * and services into `dist/switchyard.js`, beside the console's built files (`dist/console/`) and the
 * default catalog (`dist/default-catalog.yaml`): everything it reads is found next to itself.
 */
const dist = new URL("./", import.meta.url);
const defaultCatalog = fileURLToPath(new URL("default-catalog.yaml", dist));
const consoleDir = fileURLToPath(new URL("console/", dist));

const usage = `Usage: switchyard [command]

Commands:
  start                    run the gateway in one process (the default)
  config check [file]      validate a catalog file (YAML or JSON); no file: the default catalog
  --version                print the version
  --help                   print this text

The gateway listens on PORT (8080) and keeps its data in SWITCHYARD_DATA_DIR (./.switchyard): an
embedded Postgres, events in process, files on disk. DATABASE_URL, NATS_URL and S3_ENDPOINT swap
each for the real thing; SWITCHYARD_CONFIG names the operator's catalog. On an empty database a
management key is printed once. Every setting: docs/configuration.md in the repository.
`;

function version(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

const [command, ...rest] = process.argv.slice(2);
if (command === undefined || (command === "start" && rest.length === 0)) {
  await runStandalone({ consoleDir, defaultCatalog });
} else if (command === "config" && rest[0] === "check" && rest.length <= 2) {
  process.exitCode = await checkCatalogFile(rest[1], defaultCatalog);
} else if (command === "--version" || command === "-v") {
  console.log(version());
} else if (command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(usage);
} else {
  process.stderr.write(`switchyard: unknown command: ${process.argv.slice(2).join(" ")}\n\n${usage}`);
  process.exitCode = 2;
}
