import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** One fenced code block of a markdown file. */
export interface MarkdownBlock {
  /** The file, relative to the repository root (e.g. `docs/security.md`). */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The first word of the info string (`sh`, `text`, `ts`, ...); "" when none. */
  readonly lang: string;
  /** The rest of the info string (e.g. a file name), trimmed. */
  readonly meta: string;
  /** The lines between the fences, with a final newline. */
  readonly text: string;
  /** Whether only blank lines separate this block from the one before it. */
  readonly followsPrevious: boolean;
}

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

/** The markdown files whose examples are tested: README.md, docs/*.md and the client package's README.md. */
export function documentedFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join("docs", name));
  return ["README.md", ...docs, join("client", "README.md")];
}

const FENCE = /^( {0,3})(`{3,})\s*([^`]*)$/;

/**
 * The fenced blocks of a markdown file (backtick fences only, as this
 * repository writes them). An unclosed fence is an error, not a block that
 * silently swallows the rest of the file.
 */
export function markdownBlocks(file: string): MarkdownBlock[] {
  const lines = readFileSync(join(REPO_ROOT, file), "utf8").split("\n");
  const blocks: MarkdownBlock[] = [];
  let lastEnd = -2;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (open === null) {
      continue;
    }
    const indent = open[1]?.length ?? 0;
    const fence = open[2] ?? "```";
    const [lang = "", ...rest] = (open[3] ?? "").trim().split(/\s+/);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j] ?? "";
      if (line.trim() === fence) {
        break;
      }
      body.push(line.slice(Math.min(indent, line.length - line.trimStart().length)));
    }
    if (j >= lines.length) {
      throw new Error(`${file}:${i + 1}: a code fence is never closed`);
    }
    const between = lines.slice(lastEnd + 1, i);
    blocks.push({
      file,
      line: i + 1,
      lang,
      meta: rest.join(" "),
      text: body.length === 0 ? "" : `${body.join("\n")}\n`,
      followsPrevious: lastEnd >= 0 && between.every((line) => line.trim() === ""),
    });
    lastEnd = j;
    i = j;
  }
  return blocks;
}
