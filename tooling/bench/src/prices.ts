import type { RequestCounts } from "@holdfast/conditional-store";

/**
 * Public list prices per 1,000 requests, Amazon S3 Standard, us-east-1 (as published on
 * the S3 pricing page): PUT, COPY, POST, LIST $0.005; GET, SELECT and all other requests
 * $0.0004; DELETE free. DeleteObjects is a POST; HEAD is billed as a GET.
 */
export const S3_PRICES = {
  name: "S3 Standard us-east-1 list prices: PUT/COPY/POST/LIST $0.005, GET/HEAD $0.0004 per 1,000; DELETE free (DeleteObjects is a POST)",
  perThousand: { put: 0.005, list: 0.005, deleteMany: 0.005, get: 0.0004, head: 0.0004, delete: 0 },
} as const;

/** Dollars for these requests at {@link S3_PRICES}. */
export function s3Cost(counts: RequestCounts): number {
  let dollars = 0;
  for (const [type, n] of Object.entries(counts) as [keyof RequestCounts, number][]) {
    dollars += (n * S3_PRICES.perThousand[type]) / 1000;
  }
  return dollars;
}
