/** A setting that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
