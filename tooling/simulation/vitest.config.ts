import { holdfastProject } from "@holdfast/vitest-config";

export default holdfastProject({ testTimeout: 300_000 });
