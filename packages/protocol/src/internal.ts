// @holdfast/protocol/internal: names other holdfast packages share and users never call.
// Not a stable API: it changes with the packages that use it. Covered by
// api/protocol-internal.api.md (`pnpm api:update`).

export { resolverOptions } from "./context.js";
export { CLOCK_PREFIX, CONTROL_PREFIX, clockProbeKey } from "./keys.js";
export { isValidName, MAX_NAME_LENGTH, NameSchema } from "./names.js";
export { RetirementRecordState } from "./retirement-record.js";
export { UlidSchema, VersionNumberSchema } from "./schemas.js";
export { storePrecisionMs } from "./storage-time.js";
export { parseStored } from "./stored.js";
