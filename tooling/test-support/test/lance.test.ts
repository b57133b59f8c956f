import { describe, expect, it } from "vitest";
import { azuriteLanceOptions, rgwLanceOptions } from "../src/index.js";

// The object_store options LanceDB and pylance take to reach the test services (docs/lance.md).
describe("LanceDB and pylance storage options of the test services", () => {
  it("RGW: its endpoint over plain HTTP, path-style, its credentials and region", () => {
    expect(
      rgwLanceOptions({
        endpoint: "http://127.0.0.1:7480",
        bucket: "b",
        region: "us-east-1",
        forcePathStyle: true,
        accessKeyId: "k",
        secretAccessKey: "s",
      }),
    ).toEqual({
      aws_endpoint: "http://127.0.0.1:7480",
      aws_access_key_id: "k",
      aws_secret_access_key: "s",
      aws_region: "us-east-1",
      allow_http: "true",
      aws_virtual_hosted_style_request: "false",
    });
  });

  it("Azurite: account, key and blob endpoint from the connection string; a missing part throws", () => {
    const env = {
      connectionString:
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10010/devstoreaccount1;",
      container: "c",
      origin: "http://127.0.0.1:10010",
    };
    expect(azuriteLanceOptions(env)).toEqual({
      account_name: "devstoreaccount1",
      account_key: "a2V5",
      azure_endpoint: "http://127.0.0.1:10010/devstoreaccount1",
      allow_http: "true",
    });
    expect(() =>
      azuriteLanceOptions({ ...env, connectionString: "AccountName=a;BlobEndpoint=http://x" }),
    ).toThrow(/AccountKey/);
  });
});
