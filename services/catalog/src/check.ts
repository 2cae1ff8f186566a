import { checkCatalogFile } from "./operator-config/check-file.js";

/** `npm run config:check -- <file>`: validates a catalog file; no file, the shipped default. */
process.exitCode = await checkCatalogFile(process.argv[2]);
