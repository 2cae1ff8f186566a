import type { Reporter, TestModule } from "vitest/node";

/** Prints the plain `N passed, N failed` closing line that CI reads. */
export class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of modules) {
      const failedBefore = failed;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed outside its tests (a failed beforeAll, an import error) leaves them skipped: it counts once.
      if (mod.state() === "failed" && failed === failedBefore) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}
