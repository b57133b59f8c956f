// `pnpm release:version-demo`: prints the recorded version dry run (see versioning.ts).
import { versionDryRun } from "./versioning.js";

const run = versionDryRun();
for (const step of run.steps) {
  console.log(`\n== ${step.step}`);
  for (const [name, change] of Object.entries(step.bumped)) console.log(`  ${name}: ${change}`);
  if (step.changelogs.length > 0) console.log(`  new changelogs: ${step.changelogs.join(", ")}`);
}
console.log(
  `\n== cleanup's internal ranges after the patch\n${JSON.stringify(run.cleanupRanges, null, 2)}`,
);
console.log(
  `\n== packages/conditional-store/CHANGELOG.md after the first release\n${run.firstChangelog}`,
);
