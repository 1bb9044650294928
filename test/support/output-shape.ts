// What the documentation's sample output and a real run must share: the text
// with every value that differs from run to run (tokens, token ids, dates,
// times, keys, signatures) replaced by its kind. The same replacements apply
// to both sides, so a fixed word that happens to look like a value (such as
// the 16-letter INVALID_ARGUMENT) stays equal on both.
const VARIABLE: readonly [RegExp, string][] = [
  // A folder `mktemp -d` made (tmp. + 10 characters), wherever TMPDIR put it.
  [/(?:\/[^\s/]+)*\/tmp\.[A-Za-z0-9]{10}(?![A-Za-z0-9])/g, "<temp dir>"],
  // A public key's fingerprint: SHA256: + 43 base64 characters (before the
  // base64 in it can look like an id).
  [/SHA256:[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/=])/g, "<fingerprint>"],
  // A bearer token: pt_ + 80 base64url characters + a 6-character checksum.
  [/pt_[A-Za-z0-9_-]{86}(?![A-Za-z0-9_-])/g, "<token>"],
  [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, "<time>"],
  [/(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)/g, "<date>"],
  [/(?<![0-9a-f])[0-9a-f]{128}(?![0-9a-f])/g, "<signature>"],
  [/(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g, "<public key>"],
  // Unix milliseconds.
  [/(?<!\d)\d{13}(?!\d)/g, "<ms>"],
  // A token id: 16 base64url characters.
  [/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{16}(?![A-Za-z0-9_-])/g, "<id>"],
];

/** The text with its run-dependent values replaced, trailing spaces and blank ends trimmed. */
export function outputShape(text: string): string {
  let shape = text;
  for (const [pattern, kind] of VARIABLE) {
    shape = shape.replace(pattern, kind);
  }
  return shape
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .trim();
}
