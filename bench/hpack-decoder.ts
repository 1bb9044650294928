import { huffmanDecode } from "./hpack-huffman.js";

// The HPACK static table (RFC 7541, Appendix A), index 1 first.
const STATIC: readonly (readonly [string, string])[] = [
  [":authority", ""],
  [":method", "GET"],
  [":method", "POST"],
  [":path", "/"],
  [":path", "/index.html"],
  [":scheme", "http"],
  [":scheme", "https"],
  [":status", "200"],
  [":status", "204"],
  [":status", "206"],
  [":status", "304"],
  [":status", "400"],
  [":status", "404"],
  [":status", "500"],
  ...[
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
  ].map((name) => [name, name === "accept-encoding" ? "gzip, deflate" : ""] as const),
];

/** A header field: name and value. */
export type HeaderField = readonly [string, string];

/**
 * An HPACK decoder (RFC 7541) for one connection's header blocks, in the
 * order they arrive: the dynamic table (default size 4096, resized by the
 * encoder's size updates) is shared by every block of the connection.
 */
export function createHpackDecoder() {
  const dynamic: HeaderField[] = [];
  let size = 0;
  let maxSize = 4096;
  const evict = () => {
    while (size > maxSize) {
      const oldest = dynamic.pop();
      if (oldest === undefined) {
        break;
      }
      size -= oldest[0].length + oldest[1].length + 32;
    }
  };
  const field = (index: number): HeaderField => {
    const found = index <= STATIC.length ? STATIC[index - 1] : dynamic[index - STATIC.length - 1];
    if (index === 0 || found === undefined) {
      throw new Error(`HPACK index ${index} out of range`);
    }
    return found;
  };

  return {
    /** The fields of one whole header block (HEADERS and any CONTINUATION payloads, joined). */
    decode(block: Buffer): HeaderField[] {
      const fields: HeaderField[] = [];
      let at = 0;
      const integer = (prefixBits: number): number => {
        const max = 2 ** prefixBits - 1;
        let value = (block[at++] ?? 0) & max;
        if (value < max) {
          return value;
        }
        let shift = 1;
        for (;;) {
          const byte = block[at++];
          if (byte === undefined) {
            throw new Error("HPACK integer cut short");
          }
          value += (byte & 0x7f) * shift;
          shift *= 128;
          if ((byte & 0x80) === 0) {
            return value;
          }
        }
      };
      const string = (): string => {
        const huffman = ((block[at] ?? 0) & 0x80) !== 0;
        const length = integer(7);
        const bytes = block.subarray(at, at + length);
        if (bytes.length !== length) {
          throw new Error("HPACK string cut short");
        }
        at += length;
        return huffman ? huffmanDecode(bytes) : bytes.toString("latin1");
      };
      const literal = (prefixBits: number): HeaderField => {
        const index = integer(prefixBits);
        const name = index === 0 ? string() : field(index)[0];
        return [name, string()];
      };
      while (at < block.length) {
        const first = block[at] ?? 0;
        if ((first & 0x80) !== 0) {
          fields.push(field(integer(7)));
        } else if ((first & 0xc0) === 0x40) {
          const entry = literal(6);
          fields.push(entry);
          dynamic.unshift(entry);
          size += entry[0].length + entry[1].length + 32;
          evict();
        } else if ((first & 0xe0) === 0x20) {
          maxSize = integer(5);
          evict();
        } else {
          // Literal without indexing (0000) or never indexed (0001).
          fields.push(literal(4));
        }
      }
      return fields;
    },
  };
}

export type HpackDecoder = ReturnType<typeof createHpackDecoder>;
