import { holdfastProject } from "@holdfast/vitest-config";

// Route suites run against real RGW and Azurite; the replica and browser tests start processes.
export default holdfastProject({
  testTimeout: 180_000,
  hookTimeout: 180_000,
  // Files share the test services and start servers and processes: one at a time.
  fileParallelism: false,
});
