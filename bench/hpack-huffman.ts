// HPACK's Huffman code (RFC 7541, Appendix B). The code is canonical, so the
// 256 code lengths determine every code: one letter per byte value, 'A' = 5 bits.
const LENGTHS =
  "ISXXXXXXXTZXXZXXXXXXXXZXXXXXXXXXBFFHIBDGFFDGDBBBAAABBBBBBBCDKBHFIBCCCCCCCCCCCCCCCCCCCCCCDCDIOIJBKABABABBBACCBBBABCBAABCCCCCKGJIXPRPPRRRSRSSSSSTSTTRSTSSSSQRSRSSTRQPRRSSQSRRTQRSSQQRQSRSSPRRRSRRSVVPORSRUVVVWWVTUOQVWWVWTQQVVXWWWPTPQRQQSRRUUTTVSVWVVWWWWWXWWWWWV";
const MAX_LENGTH = 30;

/** Per code length: the first code, and where its symbols start in `symbols`. */
const symbols: number[] = [];
const firstCode = new Array<number>(MAX_LENGTH + 1).fill(0);
const firstIndex = new Array<number>(MAX_LENGTH + 1).fill(0);
const counts = new Array<number>(MAX_LENGTH + 1).fill(0);
{
  const lengthOf = (symbol: number) => LENGTHS.charCodeAt(symbol) - 65 + 5;
  const order = Array.from({ length: 256 }, (_, s) => s).sort(
    (a, b) => lengthOf(a) - lengthOf(b) || a - b,
  );
  let code = 0;
  let length = lengthOf(order[0] ?? 0);
  order.forEach((symbol, i) => {
    const l = lengthOf(symbol);
    if (i > 0) {
      code = (code + 1) * 2 ** (l - length);
      length = l;
    }
    if (counts[l] === 0) {
      firstCode[l] = code;
      firstIndex[l] = i;
    }
    counts[l] = (counts[l] ?? 0) + 1;
    symbols.push(symbol);
  });
}

/** Decodes a Huffman-coded HPACK string (its padding is the most significant bits of EOS). */
export function huffmanDecode(bytes: Uint8Array): string {
  const out: number[] = [];
  let code = 0;
  let length = 0;
  for (const byte of bytes) {
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1);
      length++;
      const offset = code - (firstCode[length] ?? 0);
      if (offset >= 0 && offset < (counts[length] ?? 0)) {
        out.push(symbols[(firstIndex[length] ?? 0) + offset] ?? 0);
        code = 0;
        length = 0;
      } else if (length > MAX_LENGTH) {
        throw new Error("invalid Huffman code");
      }
    }
  }
  if (length > 7 || code !== 2 ** length - 1) {
    throw new Error("invalid Huffman padding");
  }
  return String.fromCharCode(...out);
}
