import { isHoldfastError } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { chooseAzureCredentials } from "../src/azure-credentials.js";
import { cli, readServiceEnv } from "./e2e-harness.js";

// docs/operations.md, "Credentials": Azurite serves plain HTTP and token credentials need
// HTTPS, so the DefaultAzureCredential path is tested for selection and error messages;
// the shared-key path runs against Azurite for real.

describe("Azure credential selection", () => {
  it("a connection string wins unless --account names an account", () => {
    expect(chooseAzureCredentials({ AZURE_STORAGE_CONNECTION_STRING: "cs" }, {})).toEqual({
      kind: "connection-string",
      connectionString: "cs",
    });
    expect(
      chooseAzureCredentials({ AZURE_STORAGE_CONNECTION_STRING: "cs" }, { account: "acct1" }),
    ).toEqual({
      kind: "default-credential",
      account: "acct1",
      accountUrl: "https://acct1.blob.core.windows.net",
    });
  });

  it("an account with a key is shared key; an account alone is DefaultAzureCredential", () => {
    const keyed = chooseAzureCredentials(
      { AZURE_STORAGE_ACCOUNT: "acct1", AZURE_STORAGE_KEY: "k" },
      {},
    );
    expect(keyed).toMatchObject({ kind: "connection-string" });
    expect((keyed as { connectionString: string }).connectionString).toContain(
      "AccountName=acct1;AccountKey=k;BlobEndpoint=https://acct1.blob.core.windows.net",
    );
    expect(chooseAzureCredentials({ AZURE_STORAGE_ACCOUNT: "acct1" }, {})).toEqual({
      kind: "default-credential",
      account: "acct1",
      accountUrl: "https://acct1.blob.core.windows.net",
    });
    expect(
      chooseAzureCredentials({}, { account: "acct1", blobEndpoint: "https://blob.example/acct1/" }),
    ).toMatchObject({ accountUrl: "https://blob.example/acct1" });
  });

  it("bad flags are invalid-input and no source at all is auth, before any request", () => {
    const bad = (() => {
      try {
        return chooseAzureCredentials({}, { account: "Not_An_Account" });
      } catch (e) {
        return e;
      }
    })();
    expect(isHoldfastError(bad, "invalid-input")).toBe(true);
    const none = (() => {
      try {
        return chooseAzureCredentials({}, {});
      } catch (e) {
        return e;
      }
    })();
    expect(isHoldfastError(none, "auth")).toBe(true);
    expect(none).toMatchObject({ code: "NoCredentials" });
    expect((none as Error & { hint: string }).hint).toMatch(/DefaultAzureCredential/);
  });
});

describe("Azure credentials against Azurite (built CLI)", () => {
  const azurite = readServiceEnv("azurite");
  const endpoint = /BlobEndpoint=([^;]+)/.exec(azurite.AZURE_STORAGE_CONNECTION_STRING!)![1]!;
  const key = /AccountKey=([^;]+)/.exec(azurite.AZURE_STORAGE_CONNECTION_STRING!)![1]!;
  const container = azurite.HOLDFAST_AZURE_CONTAINER!;
  const url = `az://${container}/ops-cred-${Date.now()}`;

  it("--account with AZURE_STORAGE_KEY and no connection string works (shared key)", async () => {
    const r = await cli(
      ["init", url, "--account", "devstoreaccount1", "--blob-endpoint", endpoint, "--json"],
      {
        env: { AZURE_STORAGE_KEY: key },
      },
    );
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, backend: "azure" });
  });

  it("--account alone uses DefaultAzureCredential: over http it says token auth needs https (exit 1), echoing no secret", async () => {
    const r = await cli(
      ["status", url, "--account", "devstoreaccount1", "--blob-endpoint", endpoint, "--json"],
      {
        env: {},
      },
    );
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ ok: false, error: { kind: "auth", code: "TokenNeedsHttps" } });
    expect(r.stdout + r.stderr).not.toContain(key);
  });
});
