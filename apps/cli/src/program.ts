import { holdfastError } from "@holdfast/conditional-store";
import { Command, CommanderError } from "commander";
import { ExitCode } from "./exit-codes.js";
import { type CliIo, Output } from "./output.js";

/** Where every `--help` points for exit codes, error kinds and stuck states. */
export const OPERATIONS_POINTER =
  "Exit codes, errors and stuck states explained: docs/operations.md (holdfast repository).";

/** What a command handler receives besides its arguments. */
export interface CommandContext {
  readonly io: CliIo;
  readonly out: Output;
  /** Full command name, e.g. `lease acquire`, as reported in `--json`. */
  readonly command: string;
  /** Fires on Ctrl-C / SIGTERM so long-running commands can release what they hold. */
  readonly interrupt: AbortSignal;
}

/** A handler returns its exit code (default 0); errors it throws are printed and mapped. */
export type Handler = (
  args: readonly string[],
  options: Record<string, unknown>,
  cx: CommandContext,
) => Promise<number | undefined>;

/** Everything `register` functions need to attach commands. */
export interface Registrar {
  readonly io: CliIo;
  /** Adds `--json`, wires the handler with uniform error handling, and appends examples to `--help`. */
  leaf(command: Command, name: string, examples: readonly string[], handler: Handler): Command;
}

/** Adds the storage options every command that takes a URL accepts. */
export function withStoreOptions(command: Command): Command {
  return command
    .option(
      "--endpoint <url>",
      "S3-compatible endpoint, e.g. http://127.0.0.1:7480 (env HOLDFAST_S3_ENDPOINT; default AWS), or a GCS emulator for gs:// URLs (env STORAGE_EMULATOR_HOST; default Google with Application Default Credentials)",
    )
    .option("--region <region>", "S3 region (env HOLDFAST_S3_REGION, else the AWS chain)")
    .option(
      "--path-style",
      "address S3 buckets by path, as most S3-compatible stores need (env HOLDFAST_S3_PATH_STYLE=true)",
    )
    .option(
      "--account <name>",
      "Azure storage account for az:// URLs without a connection string: signs in with DefaultAzureCredential (env AZURE_STORAGE_ACCOUNT)",
    )
    .option(
      "--blob-endpoint <url>",
      "Azure blob endpoint for --account (default https://<account>.blob.core.windows.net)",
    )
    .option(
      "--storage-options-file <json>",
      "store settings as Lance's storage_options: a JSON object of object_store keys (aws_endpoint, aws_region, azure_storage_account_name, google_service_account_path, ...)",
    )
    .option(
      "--storage-option <key=value>",
      "one storage_options key (repeatable), e.g. --storage-option aws_region=eu-west-1",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    );
}

/**
 * Runs the CLI on `argv` (without node and script) and returns the exit code.
 * Never calls `process.exit`, so tests can run it in-process.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  register: (registrar: Registrar, program: Command) => void,
  options: { version: string; interrupt?: AbortSignal } = { version: "0.0.0" },
): Promise<number> {
  const wantsJson = argv.includes("--json");
  const interrupt = options.interrupt ?? new AbortController().signal;
  let exitCode: number = ExitCode.ok;

  const program = new Command("holdfast")
    .description(
      "Share versioned datasets on object storage and delete old versions safely.\n" +
        "Storage URLs: a local path or file:///abs/path, s3://bucket/prefix, az://container/prefix, gs://bucket/prefix.",
    )
    .version(options.version, "-V, --version")
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Parse errors are printed by us, in the one-line-plus-hint (or JSON) format.
      outputError: () => {},
    })
    .exitOverride()
    .showSuggestionAfterError(true)
    .allowExcessArguments(false)
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 failure, 2 usage/invalid input, 3 conflict, 4 unknown outcome (run recover),\n" +
        "            5 store unsupported, 130 interrupted.\n" +
        "What each exit code and error kind means, and what to do when something is stuck:\n" +
        "            docs/operations.md in the holdfast repository.\n" +
        "Every command accepts --json (one JSON document on stdout) and --help.\n" +
        "Start here: holdfast demo ./holdfast-demo",
    );

  const registrar: Registrar = {
    io,
    leaf(command, name, examples, handler) {
      command.option("--json", "print one JSON document on stdout (stable shape, see README)");
      if (examples.length > 0) {
        command.addHelpText("after", `\nExamples:\n${examples.map((e) => `  $ ${e}`).join("\n")}`);
      }
      command.addHelpText("after", `\n${OPERATIONS_POINTER}`);
      command.action(async (...params: unknown[]) => {
        const self = params.at(-1) as Command;
        const opts = self.opts() as Record<string, unknown>;
        const args = self.processedArgs.flatMap((a: unknown) =>
          Array.isArray(a) ? a.map(String) : a === undefined ? [] : [String(a)],
        );
        const out = new Output(io, { json: opts.json === true });
        try {
          const code = await handler(args, opts, { io, out, command: name, interrupt });
          exitCode = code ?? ExitCode.ok;
        } catch (error) {
          exitCode = out.error(name, error);
        }
      });
      return command;
    },
  };
  register(registrar, program);
  // Commands built with `new Command()` inherit nothing: give every one the program's
  // output routing and exit override, so no path calls process.exit or writes elsewhere.
  const inherit = (parent: Command) => {
    for (const child of parent.commands) {
      child.copyInheritedSettings(parent);
      inherit(child);
    }
  };
  inherit(program);

  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") {
        return ExitCode.ok;
      }
      // A command group without its subcommand: commander already printed the group's help.
      if (error.code === "commander.help") return ExitCode.usage;
      const out = new Output(io, { json: wantsJson });
      // Commander prefixes "error: "; we print our own prefix.
      const message = error.message.replace(/^error:\s*/, "");
      const command = commandPath(program, argv);
      return out.error(
        command,
        holdfastError("invalid-input", "parse", message, {
          code: error.code,
          hint: `run: holdfast ${command === "holdfast" ? "" : `${command} `}--help`,
        }),
      ) as number;
    }
    throw error;
  }
  return exitCode;
}

// --- utils ---

/** Best-effort name of the subcommand argv addresses, for errors before any action ran. */
function commandPath(program: Command, argv: readonly string[]): string {
  const names: string[] = [];
  let current: Command = program;
  for (const word of argv) {
    if (word.startsWith("-")) continue;
    const next = current.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) break;
    names.push(next.name());
    current = next;
  }
  return names.length === 0 ? "holdfast" : names.join(" ");
}
