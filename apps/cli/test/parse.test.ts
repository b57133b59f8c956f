import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { parseCountArg, parseVersionArg, parseVersionRef } from "../src/args.js";
import { formatBytes, formatDuration, parseDuration } from "../src/duration.js";
import { ExitCode, exitCodeFor } from "../src/exit-codes.js";
import { formatStorageUrl, parseStorageUrl, parseStoreOptions } from "../src/url.js";

function invalid(fn: () => unknown): ReturnType<typeof holdfastError> {
  try {
    fn();
  } catch (error) {
    expect(isHoldfastError(error, "invalid-input")).toBe(true);
    return error as ReturnType<typeof holdfastError>;
  }
  throw new Error("expected an invalid-input error");
}

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["15m", 900_000],
    ["7d", 604_800_000],
    ["250ms", 250],
    ["1h30m", 5_400_000],
    ["1.5s", 1500],
    ["2w", 1_209_600_000],
    ["0s", 0],
    ["0", 0],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "60", "10x", "-5s", "5 s", "s", "1h1h", "1.0005s", "99999w", "5sec"])(
    "rejects %j with invalid-input and a hint",
    (text) => {
      const error = invalid(() => parseDuration(text, "--ttl"));
      expect(error.hint).toMatch(/90s/);
      expect(error.message).toContain("--ttl");
    },
  );

  it("formats durations and bytes for people", () => {
    expect(formatDuration(120)).toBe("120ms");
    expect(formatDuration(2500)).toBe("2.5s");
    expect(formatDuration(5_400_000)).toBe("1h 30m");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
  });
});

describe("parseStorageUrl", () => {
  it("resolves a bare relative path against cwd", () => {
    expect(parseStorageUrl("data/ds", "/home/me")).toEqual({
      scheme: "file",
      root: "/home/me/data/ds",
    });
    expect(parseStorageUrl("/abs/ds", "/home/me")).toEqual({ scheme: "file", root: "/abs/ds" });
  });

  it("accepts file:// URLs with an absolute path", () => {
    expect(parseStorageUrl("file:///tmp/ds")).toEqual({ scheme: "file", root: "/tmp/ds" });
    expect(parseStorageUrl("file://localhost/tmp/ds")).toEqual({ scheme: "file", root: "/tmp/ds" });
    expect(parseStorageUrl("file:///tmp/my%20ds")).toEqual({ scheme: "file", root: "/tmp/my ds" });
  });

  it("parses s3 and az URLs with optional prefixes", () => {
    expect(parseStorageUrl("s3://my-bucket")).toEqual({
      scheme: "s3",
      bucket: "my-bucket",
      prefix: "",
    });
    expect(parseStorageUrl("s3://my-bucket/a/b/")).toEqual({
      scheme: "s3",
      bucket: "my-bucket",
      prefix: "a/b",
    });
    expect(parseStorageUrl("az://container1/ds")).toEqual({
      scheme: "az",
      container: "container1",
      prefix: "ds",
    });
    expect(formatStorageUrl(parseStorageUrl("s3://my-bucket/a/b/"))).toBe("s3://my-bucket/a/b");
    expect(formatStorageUrl(parseStorageUrl("az://container1"))).toBe("az://container1");
  });

  it("parses gs URLs (bucket names with '_' and dots too) with optional prefixes", () => {
    expect(parseStorageUrl("gs://my_bucket.example.com/a/b/")).toEqual({
      scheme: "gs",
      bucket: "my_bucket.example.com",
      prefix: "a/b",
    });
    expect(parseStorageUrl("gs://my-bucket")).toEqual({
      scheme: "gs",
      bucket: "my-bucket",
      prefix: "",
    });
    expect(formatStorageUrl(parseStorageUrl("gs://my-bucket/a/b/"))).toBe("gs://my-bucket/a/b");
  });

  it.each([
    ["", /empty/],
    ["hdfs://bucket/x", /unsupported scheme hdfs/],
    ["gs://My_Bucket/x", /lowercase/],
    ["gs://goog-data/x", /'goog'/],
    ["gs://a..b/x", /dot-separated part/],
    ["gs://1.2.3.4/x", /IP address/],
    ["gs://bucket/a//b", /empty path segment/],
    ["http://example.com/x", /unsupported scheme http/],
    ["s3:bucket", /expected s3:\/\//],
    ["s3://", /3 to 63/],
    ["s3://My_Bucket/x", /lowercase/],
    ["s3://ab", /3 to 63/],
    ["s3://a..b/x", /'\.\.'/],
    ["s3://bucket/a//b", /empty path segment/],
    ["s3://bucket/a/../b", /'\.\.' segment/],
    ["s3://bucket/x?versionId=1", /query/],
    ["az://Container/x", /lowercase/],
    ["az://con--tainer/x", /single '-'/],
    ["file://host/tmp/x", /names no host/],
  ])("rejects %j", (text, why) => {
    const error = invalid(() => parseStorageUrl(text));
    expect(error.message).toMatch(why);
    expect(error.hint).toMatch(/s3:\/\/bucket\/prefix/);
  });

  it("refuses credentials in the URL without echoing them", () => {
    const error = invalid(() => parseStorageUrl("s3://AKIASECRET:hunter2@bucket/x"));
    expect(error.message).not.toContain("hunter2");
    expect(error.message).not.toContain("AKIASECRET");
    expect(error.message).toMatch(/credentials/);
  });

  it("validates store options", () => {
    expect(
      parseStoreOptions({
        endpoint: "http://127.0.0.1:7480",
        region: "us-east-1",
        pathStyle: true,
      }),
    ).toEqual({
      endpoint: "http://127.0.0.1:7480",
      region: "us-east-1",
      pathStyle: true,
    });
    expect(invalid(() => parseStoreOptions({ endpoint: "ftp://x" })).message).toMatch(/http/);
    expect(invalid(() => parseStoreOptions({ endpoint: "http://u:p@host" })).message).toMatch(
      /credentials/,
    );
    expect(invalid(() => parseStoreOptions({ region: "US EAST" })).message).toMatch(/region/);
  });
});

describe("argument parsing", () => {
  it("parses versions and refs strictly", () => {
    expect(parseVersionArg("12")).toBe(12);
    for (const bad of ["0", "-1", "1.5", "abc", "", "1e3"]) invalid(() => parseVersionArg(bad));
    expect(parseVersionRef("7", "main")).toEqual({ branch: "main", version: 7 });
    expect(parseVersionRef("exp@3", "main")).toEqual({ branch: "exp", version: 3 });
    invalid(() => parseVersionRef("a/b@3", "main"));
    expect(parseCountArg("0", "--retain")).toBe(0);
    invalid(() => parseCountArg("-1", "--retain"));
  });
});

describe("exit codes", () => {
  it("map each error kind to its documented code", () => {
    const code = (kind: Parameters<typeof holdfastError>[0]) =>
      exitCodeFor(holdfastError(kind, "x", "m"));
    expect(code("invalid-input")).toBe(ExitCode.usage);
    expect(code("conflict")).toBe(ExitCode.conflict);
    expect(code("in-flight")).toBe(ExitCode.conflict);
    expect(code("unresolved")).toBe(ExitCode.unknown);
    expect(code("ambiguous")).toBe(ExitCode.unknown);
    expect(code("unsupported")).toBe(ExitCode.unsupported);
    expect(code("not-found")).toBe(ExitCode.failure);
    expect(code("auth")).toBe(ExitCode.failure);
    expect(exitCodeFor(new Error("bug"))).toBe(ExitCode.failure);
    // A lease or reference refused because its version is being retired lost a race: conflict.
    for (const c of ["RETIRING", "SEALED", "COMMITTED"]) {
      expect(exitCodeFor(holdfastError("refused", "acquireLease", "m", { code: c }))).toBe(
        ExitCode.conflict,
      );
    }
    expect(exitCodeFor(holdfastError("refused", "put", "m", { code: "NoSuchBucket" }))).toBe(
      ExitCode.failure,
    );
    expect(new Set(Object.values(ExitCode)).size).toBe(Object.keys(ExitCode).length);
  });
});

describe("output helpers", () => {
  it("colours only a TTY, and NO_COLOR or TERM=dumb win", async () => {
    const { shouldColor } = await import("../src/output.js");
    expect(shouldColor({ write: () => true, isTTY: true }, {})).toBe(true);
    expect(shouldColor({ write: () => true, isTTY: false }, {})).toBe(false);
    expect(shouldColor({ write: () => true, isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(shouldColor({ write: () => true, isTTY: true }, { TERM: "dumb" })).toBe(false);
  });

  it("renders aligned tables and version ranges", async () => {
    const { renderTable } = await import("../src/output.js");
    const { formatRanges } = await import("../src/progress.js");
    expect(
      renderTable(
        ["A", "LONGER"],
        [
          ["x", "1"],
          ["yyy", "22"],
        ],
      ),
    ).toEqual(["A    LONGER", "---  ------", "x    1", "yyy  22"]);
    expect(formatRanges([5, 1, 2, 3, 7, 8, 10])).toBe("1-3, 5, 7-8, 10");
    expect(formatRanges([])).toBe("");
  });

  it("errors print one line plus a hint, or the typed JSON shape", async () => {
    const { Output } = await import("../src/output.js");
    let out = "";
    let err = "";
    const io = {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      env: {},
      cwd: "/",
    };
    const code = new Output(io, { json: false }).error(
      "tag create",
      holdfastError("conflict", "x", "tag v1 exists", { hint: "pick another name" }),
    );
    expect(code).toBe(3);
    expect(err).toBe("holdfast: error: tag v1 exists\nhint: pick another name\n");
    expect(out).toBe("");
    new Output(io, { json: true }).error("tag create", new Error("boom"));
    expect(JSON.parse(out)).toMatchObject({
      ok: false,
      command: "tag create",
      exitCode: 1,
      error: { kind: "internal", message: "boom" },
    });
  });
});
