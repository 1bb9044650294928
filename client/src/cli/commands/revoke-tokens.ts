import type { Command } from "../cli-context.js";
import { COMMON_HELP, COMMON_OPTIONS, EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { liveTokensText } from "../live-tokens-text.js";
import { OPERATOR_SECRET_HELP, secretOption } from "../operator-secret.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { INTERNAL_URL_HELP, internalUrl } from "../service-urls.js";
import { createTokenAdminClient } from "../token-admin-client.js";

const NAME = "revoke-tokens";

const OPTIONS = {
  ...COMMON_OPTIONS,
  user: { type: "string" },
  "internal-url": { type: "string" },
  "operator-secret-file": { type: "string" },
} as const;

/** `revoke-tokens`: RevokeUserTokens on the internal listener. */
export const revokeTokensCommand: Command = {
  name: NAME,
  listener: "internal",
  options: OPTIONS,
  summary: "revoke every live token of a user (internal listener)",
  help: `Usage: perps-tokens revoke-tokens --user USER_ID

Revokes every live token of the user, named and session, in one atomic step,
on the internal listener: for a compromised account. From then on each of
them is refused everywhere. The user's keys stay registered (remove a leaked
one with delete-key, which revokes the user's tokens too). Running it again
revokes only what was created since.

Options:
  --user USER_ID       the user's UUID
${INTERNAL_URL_HELP}
${OPERATOR_SECRET_HELP}
${COMMON_HELP}

With --json: {"revokedTokens":N,"userId":"…"}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const userId = required(NAME, values.user, "--user");
    const baseUrl = internalUrl(NAME, values["internal-url"], ctx.env);
    const revokedTokens = await createTokenAdminClient({
      baseUrl,
      ...(await secretOption(values["operator-secret-file"], ctx.env)),
    }).revokeUserTokens(userId);
    printResult(ctx, `Revoked ${liveTokensText(revokedTokens)} of user ${userId}.`, {
      revokedTokens,
      userId,
    });
    return ExitCode.Ok;
  },
};
