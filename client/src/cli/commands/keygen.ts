import type { Command } from "../cli-context.js";
import { COMMON_HELP, COMMON_OPTIONS, EXIT_CODES_HELP } from "../command-options.js";
import { ExitCode } from "../exit-code.js";
import { writeNewKeyFile } from "../key-file.js";
import { parseOptions, required } from "../parse-options.js";
import { printResult } from "../print-result.js";

const NAME = "keygen";

const OPTIONS = {
  ...COMMON_OPTIONS,
  out: { type: "string" },
  force: { type: "boolean" },
} as const;

/** `keygen`: a new Ed25519 key pair, the private half in a 0600 file. */
export const keygenCommand: Command = {
  name: NAME,
  listener: undefined,
  options: OPTIONS,
  summary: "make an Ed25519 key pair: private key file (mode 0600), public key printed",
  help: `Usage: perps-tokens keygen --out FILE [--force]

Makes an Ed25519 key pair, writes the private key to FILE (PKCS#8 PEM, mode
0600, the format of 'openssl genpkey -algorithm ed25519') and prints the public
key (64 hex characters) to register with 'register-key'.

Options:
  --out FILE           where to write the private key
  --force              replace FILE if it exists (default: refuse)
${COMMON_HELP}

With --json: {"keyFile":"…","publicKey":"<64 hex>"}

${EXIT_CODES_HELP}`,

  async run(args, ctx) {
    const values = parseOptions(NAME, args, OPTIONS);
    const path = required(NAME, values.out, "--out");
    const publicKey = await writeNewKeyFile({ path, force: values.force === true });
    printResult(
      ctx,
      `Wrote the private key to ${path} (mode 0600). Keep it secret.\nPublic key: ${publicKey}`,
      { keyFile: path, publicKey },
    );
    return ExitCode.Ok;
  },
};
