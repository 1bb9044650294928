/** A PEM block (RFC 7468): its label and its decoded bytes. */
export interface PemBlock {
  /** The word(s) after BEGIN, such as "PRIVATE KEY" or "PUBLIC KEY". */
  label: string;
  der: Uint8Array<ArrayBuffer>;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The PEM blocks of `text`, in order; explanatory text around them is
 * allowed, as RFC 7468 says. Throws when there is none.
 */
export function readPemBlocks(text: string): PemBlock[] {
  const blocks = [...text.matchAll(BLOCK)].map(decodeBlock);
  if (blocks.length === 0) {
    throw new TypeError("not a PEM file: no -----BEGIN ...----- / -----END ...----- block");
  }
  return blocks;
}

// atob rather than Buffer: this runs in browsers.
function decodeBlock(match: RegExpMatchArray): PemBlock {
  const label = match[1] ?? "";
  const body = (match[2] ?? "").replace(/\s+/g, "");
  if (body.length % 4 !== 0 || !BASE64.test(body)) {
    throw new TypeError(`PEM block "${label}": the body is not base64`);
  }
  const binary = atob(body);
  const der = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    der[i] = binary.charCodeAt(i);
  }
  return { label, der };
}
