import ts from "typescript";

/** One comment of a source file: where it stands and its text, markers included. */
export interface SourceComment {
  readonly pos: number;
  readonly end: number;
  readonly text: string;
}

/**
 * Every comment of a TypeScript or JavaScript source, in order. Read as
 * trivia around the syntax tree's nodes, not with a regular expression, so
 * that `//` inside a string is no comment.
 */
export function sourceComments(file: string, text: string): SourceComment[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const found = new Map<number, SourceComment>();
  const add = (ranges: ts.CommentRange[] | undefined) => {
    for (const { pos, end } of ranges ?? []) {
      found.set(pos, { pos, end, text: text.slice(pos, end) });
    }
  };
  const visit = (node: ts.Node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  add(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return [...found.values()].sort((a, b) => a.pos - b.pos);
}
