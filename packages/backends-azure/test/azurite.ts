// Test-only access to the Azurite started by tooling/services/azurite-start.sh. A missing or
// silent Azurite fails the run with instructions: these tests never skip.
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobServiceClient,
  generateAccountSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { ulidIds } from "@holdfast/conditional-store";
import { type AzuriteEnv, azuriteEnv } from "@holdfast/test-support";

/** Azurite's connection string, test container and blob service origin. */
export type AzuriteTarget = AzuriteEnv;

const START_HINT =
  "start it with `bash tooling/services/azurite-start.sh` (from the repository root), or set AZURE_STORAGE_CONNECTION_STRING and HOLDFAST_AZURE_CONTAINER";

/** The connection, from the environment or the env file azurite-start.sh writes (the shared test support). */
export function azuriteTarget(): AzuriteTarget {
  return azuriteEnv();
}

/** Ensures the test container exists; fails with the start hint when Azurite does not answer. */
export async function ensureContainer(target: AzuriteTarget): Promise<void> {
  const service = BlobServiceClient.fromConnectionString(target.connectionString, {
    retryOptions: { maxTries: 1 },
  });
  try {
    await service.getContainerClient(target.container).createIfNotExists();
  } catch (error) {
    throw new Error(`Azurite at ${target.origin} did not answer (${String(error)}); ${START_HINT}`);
  }
}

/** The same connection string aimed at another blob service origin (e.g. a fault proxy). */
export function withOrigin(connectionString: string, origin: string): string {
  return connectionString.replace(/BlobEndpoint=([^;]+)/, (_, endpoint: string) => {
    const url = new URL(endpoint);
    return `BlobEndpoint=${origin}${url.pathname}`;
  });
}

/**
 * An account-SAS connection string for `target`, optionally aimed at another origin. A SAS
 * signs no headers, so a fault proxy may strip them without re-signing.
 */
export function sasConnectionString(target: AzuriteTarget, origin = target.origin): string {
  const name = /AccountName=([^;]+)/.exec(target.connectionString)?.[1];
  const key = /AccountKey=([^;]+)/.exec(target.connectionString)?.[1];
  if (!name || !key) throw new Error("the Azurite connection string lacks AccountName/AccountKey");
  const sas = generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 60 * 60 * 1000),
      permissions: AccountSASPermissions.parse("rwdlac"),
      resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
      services: AccountSASServices.parse("b").toString(),
    },
    new StorageSharedKeyCredential(name, key),
  ).toString();
  const endpoint = /BlobEndpoint=([^;]+)/.exec(withOrigin(target.connectionString, origin))?.[1];
  return `BlobEndpoint=${endpoint};SharedAccessSignature=${sas}`;
}

const ids = ulidIds();

/** A fresh prefix per store, so tests never see each other's objects. */
export function freshPrefix(label: string): string {
  return `test/${label}/${ids.next().toLowerCase()}`;
}
