import { Code } from "@connectrpc/connect";

// Worked out once: the metrics label every answer with its code.
const NAMES = new Map<Code, string>(
  Object.values(Code)
    .filter((value): value is Code => typeof value === "number")
    .map((code) => [code, snakeCase(Code[code])]),
);

function snakeCase(name: string): string {
  return name.replace(/(?<=[a-z])([A-Z])/g, "_$1").toLowerCase();
}

/**
 * A code's name as the Connect protocol writes it ("invalid_argument"), the
 * label of the log line and the metrics: Connect's own `codeToString` is in
 * one of its non-public entry points (see wire/README.md).
 */
export function codeName(code: Code): string {
  return NAMES.get(code) ?? String(code);
}
