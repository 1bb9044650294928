/** A wrong command line (exit code 2): the message says what, and where the help is. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The command whose help to point at; undefined for the top level. */
  readonly command: string | undefined;

  constructor(command: string | undefined, message: string) {
    super(message);
    this.command = command;
  }
}
