import { describeDatasetFormatContract } from "@holdfast/format-contract";
import { createContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { censusLanceReferences, lanceFormatEntry, openLanceFormat } from "../src/index.js";
import { TABLE } from "./history.js";
import { type LanceSite, localSite, rgwSite, rows } from "./sites.js";

/** The "any dataset format" contract on tables LanceDB writes (4 versions: create, overwrite, append, delete). */
function lanceFixture(makeSite: () => LanceSite) {
  return async () => {
    const site = makeSite();
    const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
    const table = await db.createTable(TABLE, rows(50, 0));
    await table.add(rows(50, 100), { mode: "overwrite" });
    await table.add(rows(50, 200));
    await table.delete("id % 5 = 0");
    table.close();
    const ctx = createContext(await site.store(TABLE));
    const format = await openLanceFormat(ctx);
    return { ctx, format, branch: "main", referenceCensus: censusLanceReferences(ctx) };
  };
}

describeDatasetFormatContract("lance on Ceph RGW (S3)", {
  create: lanceFixture(rgwSite),
  entry: lanceFormatEntry,
});
describeDatasetFormatContract("lance on local disk", {
  create: lanceFixture(localSite),
  entry: lanceFormatEntry,
});
