import { PHASE_NAMES, type PhaseName } from "./bench-context.js";

/** The command line of `npm run bench`. */
export interface BenchArgs {
  /** `--quick`: short phases (under a few minutes), results in latest-quick.*. */
  readonly quick: boolean;
  /** `--cpu-prof`: the service writes a V8 CPU profile to bench/results/profiles/. */
  readonly cpuProf: boolean;
  /** `--pin`: the service on CPU 0, the bench and Redis on CPU 1 (when taskset works). */
  readonly pin: boolean;
  /** `--only=<phase,...>`: the phases to run (and those they need); undefined: all. */
  readonly only: readonly PhaseName[] | undefined;
}

const isPhaseName = (name: string): name is PhaseName =>
  (PHASE_NAMES as readonly string[]).includes(name);

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let only: PhaseName[] | undefined;
  for (const arg of argv) {
    if (arg.startsWith("--only=")) {
      const names = arg
        .slice("--only=".length)
        .split(",")
        .filter((n) => n !== "");
      const unknown = names.filter((n) => !isPhaseName(n));
      if (unknown.length > 0 || names.length === 0) {
        throw new Error(
          `--only takes phases among ${PHASE_NAMES.join(", ")}; got "${arg.slice(7)}"`,
        );
      }
      only = names.filter(isPhaseName);
    } else if (!["--quick", "--cpu-prof", "--pin"].includes(arg)) {
      throw new Error(
        `unknown argument ${arg}: use --quick, --cpu-prof, --pin, --only=<phase,...>`,
      );
    }
  }
  return {
    quick: argv.includes("--quick"),
    cpuProf: argv.includes("--cpu-prof"),
    pin: argv.includes("--pin"),
    only,
  };
}
