// API reports: api-extractor snapshots the public surface of every published entry point
// (its built .d.ts) into packages/<pkg>/api/<pkg>.api.md. `pnpm api:update` rewrites them;
// the check fails when a report is missing or differs from what the code exports now.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type ExtractorMessage,
} from "@microsoft/api-extractor";
import {
  type PublicPackage,
  publicPackages,
  publishedEntries,
  WORKSPACE_ROOT,
} from "./workspace.js";

/** Outcome of one entry point's report. */
export interface ApiReportResult {
  package: string;
  /** The export subpath, e.g. `.` or `./testing`. */
  subpath: string;
  /** Report file, relative to the workspace root. */
  report: string;
  /** True when the report on disk does not match the code (or is missing). */
  changed: boolean;
  /** Errors api-extractor raised (unresolvable entry, compiler errors). */
  errors: string[];
}

const typescriptFolder = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));

/** Report file name of one entry point: `conditional-store`, `conditional-store-testing`. */
export function reportName(pkg: PublicPackage, subpath: string): string {
  return subpath === "."
    ? pkg.short
    : `${pkg.short}-${subpath.replace(/^\.\//, "").replaceAll("/", "-")}`;
}

/**
 * Runs api-extractor on every published entry point of every public package (their dist
 * must be built). With `update`, rewrites the reports; otherwise only compares.
 */
export function runApiReports(options: {
  update: boolean;
  /** Only these packages (names). */
  only?: string[];
  /** Only these export subpaths. */
  subpaths?: string[];
  /** Where a package's reports live. @default packages/<pkg>/api */
  reportFolder?: (pkg: PublicPackage) => string;
}): ApiReportResult[] {
  const temp = mkdtempSync(join(tmpdir(), "holdfast-api-"));
  try {
    return publicPackages()
      .filter((pkg) => options.only === undefined || options.only.includes(pkg.name))
      .flatMap((pkg) =>
        publishedEntries(pkg)
          .filter(
            ({ subpath }) => options.subpaths === undefined || options.subpaths.includes(subpath),
          )
          .map(({ subpath, types }) => {
            const folder = options.reportFolder?.(pkg) ?? join(WORKSPACE_ROOT, pkg.dir, "api");
            return reportEntry(pkg, subpath, types, folder, options.update, temp);
          }),
      );
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

function reportEntry(
  pkg: PublicPackage,
  subpath: string,
  types: string,
  reportFolder: string,
  update: boolean,
  temp: string,
): ApiReportResult {
  const packageFolder = join(WORKSPACE_ROOT, pkg.dir);
  const name = reportName(pkg, subpath);
  if (update) mkdirSync(reportFolder, { recursive: true });
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: packageFolder,
      mainEntryPointFilePath: join(packageFolder, types),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: "ES2023",
            lib: ["ES2024"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            types: ["node"],
            strict: true,
            skipLibCheck: true,
          },
          files: [join(packageFolder, types)],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: name,
        reportFolder,
        reportTempFolder: temp,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: "lf",
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
          // No @public/@beta tags: everything exported is public.
          "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // A type used by the API but not exported is listed in the report, so it shows.
          "ae-forgotten-export": { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
          // Undocumented-member notes carry a source location, which depends on whether the
          // build emitted declaration maps; the report must be the same on every machine.
          "ae-undocumented": { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
        tsdocMessageReporting: {
          default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(packageFolder, "package.json"),
  });
  const errors: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    typescriptCompilerFolder: typescriptFolder,
    messageCallback: (message: ExtractorMessage) => {
      if (message.logLevel === ExtractorLogLevel.Error)
        errors.push(message.formatMessageWithLocation(WORKSPACE_ROOT));
      message.handled = true;
    },
  });
  return {
    package: pkg.name,
    subpath,
    report: `${pkg.dir}/api/${name}.api.md`,
    changed: result.apiReportChanged,
    errors,
  };
}
