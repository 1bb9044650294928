import { TOKEN_ENV } from "./bearer-token.js";
import type { CliIo, Command } from "./cli-context.js";
import { COMMON_OPTIONS } from "./command-options.js";
import { createCommand } from "./commands/create.js";
import { deleteCommand } from "./commands/delete.js";
import { deleteKeyCommand } from "./commands/delete-key.js";
import { introspectCommand } from "./commands/introspect.js";
import { keygenCommand } from "./commands/keygen.js";
import { listCommand } from "./commands/list.js";
import { listKeysCommand } from "./commands/list-keys.js";
import { registerKeyCommand } from "./commands/register-key.js";
import { revokeTokensCommand } from "./commands/revoke-tokens.js";
import { ExitCode } from "./exit-code.js";
import { DEFAULT_OPERATOR_SECRET_FILE, OPERATOR_SECRET_ENV } from "./operator-secret.js";
import { wantsHelp, wantsJson } from "./parse-options.js";
import { CLI_NAME, reportError } from "./report-error.js";
import { INTERNAL_URL_ENV, PUBLIC_URL_ENV } from "./service-urls.js";
import { UsageError } from "./usage-error.js";

const COMMANDS: readonly Command[] = [
  keygenCommand,
  registerKeyCommand,
  deleteKeyCommand,
  createCommand,
  deleteCommand,
  listCommand,
  introspectCommand,
  listKeysCommand,
  revokeTokensCommand,
];

const TOP_HELP = `Usage: ${CLI_NAME} <command> [options]

Creates and deletes API tokens of the perps token service with Ed25519-signed
requests, and registers the public keys that sign them; lists a user's named
tokens and checks tokens; lists a user's keys and revokes a user's tokens.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(14)} ${c.summary}`).join("\n")}

Run '${CLI_NAME} <command> --help' for a command's options.

Environment:
  ${PUBLIC_URL_ENV}           public listener, default http://127.0.0.1:8080 (--url)
  ${INTERNAL_URL_ENV}  internal listener, default http://127.0.0.1:9090 (--internal-url)
  ${TOKEN_ENV}                the token of list and introspect, when not on the command line
  ${OPERATOR_SECRET_ENV}
                             the operator's secret, for the commands that take
                             --operator-secret-file (else the file
                             ${DEFAULT_OPERATOR_SECRET_FILE} in this folder)

Example:
  ${CLI_NAME} keygen --out me.pem
  ${CLI_NAME} register-key --user "$USER_ID" --key me.pem
  ${CLI_NAME} create --user "$USER_ID" --key me.pem --name my-bot --expires-in 3600
  ${CLI_NAME} delete --user "$USER_ID" --key me.pem --token-id "$TOKEN_ID"
  ${TOKEN_ENV}="$TOKEN" ${CLI_NAME} list
  ${CLI_NAME} introspect "$TOKEN"
  ${CLI_NAME} list-keys --user "$USER_ID"
  ${CLI_NAME} revoke-tokens --user "$USER_ID"

Exit codes: 0 done, 1 refused by the service (or it could not be reached, or a
key file could not be read), 2 wrong command line, 3 (introspect) the token is
not live.`;

/** Runs one command line (without the node and script arguments); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const [name, ...args] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  const json = wantsJson(argv, command?.options ?? COMMON_OPTIONS);
  if (name === undefined) {
    io.stderr(`${TOP_HELP}\n`);
    return ExitCode.Usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? COMMANDS.find((c) => c.name === args[0]) : undefined;
    io.stdout(`${topic?.help ?? TOP_HELP}\n`);
    return ExitCode.Ok;
  }
  try {
    if (command === undefined) {
      throw new UsageError(undefined, `unknown command '${name}'`);
    }
    if (wantsHelp(args, command.options)) {
      io.stdout(`${command.help}\n`);
      return ExitCode.Ok;
    }
    return await command.run(args, { ...io, json });
  } catch (err) {
    return reportError(err, io, json, command?.listener);
  }
}
