/** The exit codes of perps-tokens, which scripts rely on. */
export const ExitCode = {
  /** Done. */
  Ok: 0,
  /** The service refused the call or could not be reached, or a local step failed (key file). */
  Refused: 1,
  /** The command line is wrong: unknown command or option, missing or malformed value. */
  Usage: 2,
  /** `introspect`: the service answered that the token is not live (its answer is printed). */
  Inactive: 3,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
