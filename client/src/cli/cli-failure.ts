/** A local step that failed (a key file that cannot be read or written): exit code 1. */
export class CliFailure extends Error {
  override readonly name = "CliFailure";
}
