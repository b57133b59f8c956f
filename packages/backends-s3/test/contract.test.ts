import { describeObjectStoreContract } from "@holdfast/store-contract";
import { expect, it } from "vitest";
import { openS3Store } from "../src/index.js";
import { rgwEnv, rgwOptions } from "./rgw-env.js";

// Real S3 (Ceph RGW from tooling/services/rgw-start.sh). Without it these tests fail with
// a message saying how to start it: they never skip.
it("the RGW test service is configured (run tooling/services/rgw-start.sh)", () => {
  expect(() => rgwEnv()).not.toThrow();
});

// RGW answers some losers of concurrent If-Match puts with 500 (op status -125, ECANCELED)
// instead of 412: an honest "unknown" that the resolver settles by re-issue and read-back.
const raceLoserKinds = ["conflict", "in-flight", "ambiguous"] as const;

/** RGW as the probe finds it: bare If-Match ETags, If-Match on DELETE ignored. */
const rgwCapabilities = {
  atomicConditionalUpdate: true,
  atomicConditionalDelete: false,
  timestampPrecisionMs: 1000,
  maxBatchDelete: 1000,
  etagIsContentHash: true,
} as const;

describeObjectStoreContract("s3 on Ceph RGW, repeating client (SDK retries)", {
  create: () => openS3Store(rgwOptions({ client: "repeating" })),
  capabilities: { ...rgwCapabilities, requestMode: "repeating" },
  raceLoserKinds,
});

describeObjectStoreContract("s3 on Ceph RGW, single-attempt client", {
  create: () => openS3Store(rgwOptions({ client: "single-attempt" })),
  capabilities: { ...rgwCapabilities, requestMode: "single-attempt" },
  raceLoserKinds,
});
