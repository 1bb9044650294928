import { readFile } from "node:fs/promises";
import { CliFailure } from "./cli-failure.js";

/** Environment variable with the operator's secret (overridden by `--operator-secret-file`). */
export const OPERATOR_SECRET_ENV = "PERPS_TOKENS_OPERATOR_SECRET";
/** Where the service writes its generated operator's secret, relative to the folder it runs in. */
export const DEFAULT_OPERATOR_SECRET_FILE = ".data/redis/operator-secret";

/** Help lines shared by the commands that call the admin RPCs. */
export const OPERATOR_SECRET_HELP = `  --operator-secret-file FILE
                       the operator's secret, sent as "authorization: Bearer"
                       (default $${OPERATOR_SECRET_ENV}, else ${DEFAULT_OPERATOR_SECRET_FILE}
                       in this folder: what the service writes on its first start)`;

async function readSecret(path: string): Promise<string | undefined> {
  return (await readFile(path, "utf8")).trim() || undefined;
}

/**
 * The operator's secret for an admin call: the file given with
 * `--operator-secret-file`, else $PERPS_TOKENS_OPERATOR_SECRET, else the
 * generated operator's file when the service runs from this folder;
 * undefined when there is none (the service then says what to send). A file
 * named on the command line that cannot be read is a failure.
 */
export async function operatorSecret(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  if (file !== undefined) {
    try {
      return await readSecret(file);
    } catch (err) {
      throw new CliFailure(
        `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  const fromEnv = env[OPERATOR_SECRET_ENV]?.trim();
  if (fromEnv !== undefined && fromEnv !== "") {
    return fromEnv;
  }
  return readSecret(DEFAULT_OPERATOR_SECRET_FILE).catch(() => undefined);
}

/** {@link operatorSecret} as an admin client's options: `operatorSecret` when there is one. */
export async function secretOption(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ operatorSecret?: string }> {
  const secret = await operatorSecret(file, env);
  return secret === undefined ? {} : { operatorSecret: secret };
}
