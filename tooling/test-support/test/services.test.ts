import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { latestVersion } from "@holdfast/dataset";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gcsEnv, readServiceEnv, rgwEnv, tempDataset } from "../src/index.js";

describe("test services' settings", () => {
  const saved = { ...process.env };
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "holdfast-services-"));
    for (const key of Object.keys(process.env)) {
      if (/^(HOLDFAST_|AWS_|AZURE_)/.test(key) || key === "STORAGE_EMULATOR_HOST") {
        delete process.env[key];
      }
    }
    process.env.HOLDFAST_SERVICES_DIR = dir;
  });
  afterEach(async () => {
    process.env = { ...saved };
    await rm(dir, { recursive: true, force: true });
  });

  it("reads the env file, quoted values unquoted, the environment winning", async () => {
    await writeFile(
      join(dir, "rgw.env"),
      "HOLDFAST_S3_ENDPOINT='http://127.0.0.1:7480'\nHOLDFAST_S3_BUCKET=b\nAWS_ACCESS_KEY_ID=k\nAWS_SECRET_ACCESS_KEY=\"s\"\n",
    );
    process.env.HOLDFAST_S3_BUCKET = "from-env";
    expect(rgwEnv()).toEqual({
      endpoint: "http://127.0.0.1:7480",
      bucket: "from-env",
      region: "us-east-1",
      forcePathStyle: true,
      accessKeyId: "k",
      secretAccessKey: "s",
    });
  });

  it("a service that is not configured fails with its start command (never a skip)", () => {
    expect(() => readServiceEnv("gcs")).toThrow(/bash tooling\/services\/gcs-start\.sh/);
    process.env.STORAGE_EMULATOR_HOST = "http://127.0.0.1:4443/";
    expect(gcsEnv()).toEqual({ endpoint: "http://127.0.0.1:4443", bucket: "holdfast-test" });
  });
});

describe("temporary datasets", () => {
  it("a dataset with committed versions, removed on dispose", async () => {
    const ds = await tempDataset({ versions: 2 });
    expect(await latestVersion(ds.ctx, "main")).toBe(2);
    await ds.dispose();
    await expect(import("node:fs/promises").then((fs) => fs.stat(ds.dir))).rejects.toThrow();
  });
});
