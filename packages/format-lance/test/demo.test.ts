import { afterAll, describe, expect, it } from "vitest";
import { runLanceDemo } from "../scripts/demo.js";
import { localDir } from "./sites.js";

const dir = localDir();
afterAll(() => dir.remove());

describe("npm run demo:lance", () => {
  it("shows Lance's cleanup breaking a reader and holdfast keeping the leased version", {
    timeout: 120_000,
  }, async () => {
    const lines: string[] = [];
    await runLanceDemo(dir.dir, (line) => lines.push(line));
    const text = lines.join("\n");
    expect(text).toContain("the reader's read FAILS");
    expect(text).toContain("retired versions 1, 4, 5; kept 6 (latest), 2 (lease), 3 (tag)");
    expect(text).toContain("the reader's read succeeds: 1500 rows of version 2");
    expect(text).toContain("retired 2");
    expect(text).toContain("LanceDB now lists versions 3, 6");
  });
});
