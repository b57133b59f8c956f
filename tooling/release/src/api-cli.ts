// `pnpm api:update` (rewrite every API report) and `pnpm api:check` (compare only).
import { runApiReports } from "./api-report.js";

const update = process.argv.includes("--update");
const results = runApiReports({ update });
let failed = false;
for (const r of results) {
  const state = r.errors.length > 0 ? "error" : r.changed ? (update ? "updated" : "CHANGED") : "ok";
  console.log(`${state.padEnd(8)} ${r.report}`);
  for (const e of r.errors) console.log(`         ${e}`);
  if (r.errors.length > 0 || (!update && r.changed)) failed = true;
}
if (failed) {
  console.log(
    update
      ? "api-extractor reported errors (see above)."
      : "The public API differs from its report: if the change is deliberate, run `pnpm api:update` and commit the reports.",
  );
  process.exitCode = 1;
}
