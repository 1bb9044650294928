import type { CliContext } from "./cli-context.js";

/** A command's result on stdout: the text for people, or one JSON line with `--json`. */
export function printResult(ctx: CliContext, human: string, json: unknown): void {
  ctx.stdout(ctx.json ? `${JSON.stringify(json)}\n` : `${human}\n`);
}
