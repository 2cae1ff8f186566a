// The npm registry this project is built against serves turbo's Linux binaries only. npm then leaves
// turbo's macOS and Windows optional packages out of package-lock.json, and `npm ci` refuses the file as
// out of sync. This adds the entries npm writes on a machine that can see them; npm skips them on Linux
// by their `os` field, so nothing is fetched. Run after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const turbo = lock.packages["node_modules/turbo"];
const platforms = { "darwin-64": ["darwin", "x64"], "darwin-arm64": ["darwin", "arm64"], "windows-64": ["win32", "x64"], "windows-arm64": ["win32", "arm64"] };
let added = 0;
for (const [name, [os, cpu]] of Object.entries(platforms)) {
  const key = `node_modules/@turbo/${name}`;
  if (lock.packages[key] || !turbo?.optionalDependencies?.[`@turbo/${name}`]) continue;
  lock.packages[key] = { version: turbo.version, cpu: [cpu], dev: true, license: "MIT", optional: true, os: [os] };
  added++;
}
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
