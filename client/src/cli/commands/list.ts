import { bearerToken, TOKEN_ENV_HELP } from "../bearer-token.js";
import type { Command } from "../cli-context.js";
import { closingClient } from "../closing-client.js";
import { EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { parseOptions } from "../parse-options.js";
import { printResult } from "../print-result.js";
import { PUBLIC_HELP, PUBLIC_OPTIONS, publicTokenClient } from "../public-token-client.js";
import { tokenListText } from "../token-list-text.js";

const NAME = "list";

const OPTIONS = {
  ...PUBLIC_OPTIONS,
  token: { type: "string" },
} as const;

/** `list`: ListTokens on the public listener, authenticated by a bearer token of the user. */
export const listCommand: Command = {
  name: NAME,
  listener: "public",
  options: OPTIONS,
  summary: "list your named tokens (with any token of yours)",
  help: `Usage: perps-tokens list [--token TOKEN]

Lists the live named tokens of the user whose token TOKEN is (named or
session), ordered by expiry (soonest first), then by name: id, expiry date
and name, never a token. Session tokens are never listed. Fetches every page
(100 tokens a page); each page counts against the user's list rate.

Options:
  --token TOKEN        a live token of the user, sent as Authorization: Bearer
${PUBLIC_HELP}

${TOKEN_ENV_HELP}

With --json: [{"id":"…","name":"…","expiresAt":"YYYY-MM-DD"}], [] when none.

${EXIT_CODES_HELP} A malformed, unknown,
expired or deleted token is UNAUTHENTICATED (exit 1).`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const token = bearerToken(NAME, values.token, "--token TOKEN", ctx.env);
    const client = await publicTokenClient(NAME, values, ctx.env);
    return closingClient(client, async () => {
      // The largest page the service allows: fewest calls against the list rate.
      const tokens = await client.listTokens(token, { pageSize: 100 });
      printResult(ctx, tokenListText(tokens), tokens);
      return ExitCode.Ok;
    });
  },
};
