/**
 * Settings that cannot be used: `problems` has one message per bad variable,
 * each naming it; `message` is them one per line.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: readonly string[];

  constructor(problem: string | readonly string[]) {
    const problems = typeof problem === "string" ? [problem] : problem;
    super(problems.join("\n"));
    this.problems = problems;
  }
}
