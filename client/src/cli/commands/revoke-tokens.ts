import {
  ADMIN_CONNECTION_HELP,
  ADMIN_OPTIONS,
  ADMIN_USER_HELP,
  parseAdminCommandLine,
} from "../admin-command-line.js";
import type { Command } from "../cli-context.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { liveTokensText } from "../live-tokens-text.js";
import { printResult } from "../print-result.js";
import { createTokenAdminClient } from "../token-admin-client.js";

const NAME = "revoke-tokens";

/** `revoke-tokens`: RevokeUserTokens on the internal listener. */
export const revokeTokensCommand: Command = {
  name: NAME,
  listener: "internal",
  options: ADMIN_OPTIONS,
  summary: "revoke every live token of a user (internal listener)",
  help: `Usage: perps-tokens revoke-tokens --user USER_ID

Revokes every live token of the user, named and session, in one atomic step,
on the internal listener: for a compromised account. From then on each of
them is refused everywhere. The user's keys stay registered (remove a leaked
one with delete-key, which revokes the user's tokens too). Running it again
revokes only what was created since.

Options:
${ADMIN_USER_HELP}
${ADMIN_CONNECTION_HELP}

With --json: {"revokedTokens":N,"userId":"…"}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const { userId, clientOptions } = parseAdminCommandLine(NAME, args, ADMIN_OPTIONS, ctx.env);
    const revokedTokens = await createTokenAdminClient(await clientOptions()).revokeUserTokens(
      userId,
    );
    printResult(ctx, `Revoked ${liveTokensText(revokedTokens)} of user ${userId}.`, {
      revokedTokens,
      userId,
    });
    return ExitCode.Ok;
  },
};
