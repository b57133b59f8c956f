import { holdfastProject } from "@holdfast/vitest-config";

export default holdfastProject();
