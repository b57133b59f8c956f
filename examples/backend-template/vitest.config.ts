import { defineConfig } from "vitest/config";

// Plain vitest: the template resolves @holdfast/* the way a third party does (their
// published builds), so it needs no workspace-only configuration.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], testTimeout: 120_000 },
});
