import type { Command } from "commander";
import type { Registrar } from "../program.js";

/** Attaches one command module's commands to the program. */
export type Register = (r: Registrar, program: Command) => void;

/**
 * Every command module (one file per top-level command) with the command it adds, in
 * `--help` order. A module
 * loads only when its command runs (or for the top-level help, which lists them all):
 * `holdfast status --help` then never loads the HTTP server (`serve`) or the progress
 * bar of a command it does not run.
 */
export const COMMAND_MODULES: readonly {
  readonly names: readonly string[];
  readonly load: () => Promise<readonly Register[]>;
}[] = [
  { names: ["demo"], load: async () => [(await import("./demo.js")).registerDemo] },
  { names: ["init"], load: async () => [(await import("./init.js")).registerInit] },
  { names: ["commit"], load: async () => [(await import("./commit.js")).registerCommit] },
  { names: ["versions"], load: async () => [(await import("./versions.js")).registerVersions] },
  { names: ["lease"], load: async () => [(await import("./lease.js")).registerLease] },
  { names: ["tag"], load: async () => [(await import("./tag.js")).registerTag] },
  { names: ["branch"], load: async () => [(await import("./branch.js")).registerBranch] },
  { names: ["cleanup"], load: async () => [(await import("./cleanup.js")).registerCleanup] },
  { names: ["recover"], load: async () => [(await import("./recover.js")).registerRecover] },
  { names: ["status"], load: async () => [(await import("./status.js")).registerStatus] },
  { names: ["doctor"], load: async () => [(await import("./doctor.js")).registerDoctor] },
  { names: ["serve"], load: async () => [(await import("./serve.js")).registerServe] },
  { names: ["token"], load: async () => [(await import("./token.js")).registerToken] },
];

/**
 * The registration `argv` needs: only the module of the command it names, or every module
 * when it names none (top-level help, a typo that wants suggestions).
 */
export async function loadCommands(argv: readonly string[]): Promise<Register> {
  const first = argv.find((word) => !word.startsWith("-"));
  const named = COMMAND_MODULES.filter((m) => first !== undefined && m.names.includes(first));
  const modules = named.length > 0 ? named : COMMAND_MODULES;
  const registers = (await Promise.all(modules.map((m) => m.load()))).flat();
  return (r, program) => {
    for (const register of registers) register(r, program);
  };
}
