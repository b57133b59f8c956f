import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { freshStore, seedDataset, testServer } from "./support.js";

describe("OpenAPI document", () => {
  let app: ZodApp;
  let dispose: () => Promise<void>;
  let doc: {
    openapi: string;
    paths: Record<
      string,
      Record<
        string,
        { security?: unknown; requestBody?: unknown; responses: Record<string, unknown> }
      >
    >;
  };

  beforeAll(async () => {
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 1);
    app = await testServer([{ name: "ds", store: fresh.store }]);
    doc = (await app.inject({ url: "/openapi.json" })).json();
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("covers every route the server registers, with bearer security on every authenticated one", () => {
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map(
          (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`,
        ),
      ),
    );
    const served = app.holdfastRoutes.filter(
      (r) =>
        r.url !== "/openapi.json" &&
        !r.url.startsWith("/docs") &&
        !r.url.startsWith("/*") &&
        r.url !== "/",
    );
    expect(served.length).toBeGreaterThan(20);
    for (const route of served) {
      expect(documented, `${route.method} ${route.url}`).toContain(`${route.method} ${route.url}`);
      const op = doc.paths[route.url.replace(/:(\w+)/g, "{$1}")]![route.method.toLowerCase()]!;
      if (route.role !== null) expect(op.security, route.url).toEqual([{ bearerAuth: [] }]);
    }
  });

  it("documents request bodies from the zod schemas (strict, with their limits)", () => {
    const acquire = doc.paths["/v1/datasets/{dataset}/leases"]!.post! as {
      requestBody: {
        content: {
          "application/json": {
            schema: {
              properties: Record<string, { minimum?: number }>;
              additionalProperties: boolean;
            };
          };
        };
      };
    };
    const schema = acquire.requestBody.content["application/json"].schema;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.ttlMs?.minimum).toBe(100);
  });

  it("serves a docs page", async () => {
    const res = await app.inject({ url: "/docs/" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("swagger");
  });
});
