import { holdfastProject } from "@holdfast/vitest-config";

// The quick performance record: every section on every backend, in one child process.
export default holdfastProject({ testTimeout: 600_000 });
