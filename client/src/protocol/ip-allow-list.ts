// A token's IP allow-list: addresses and CIDR prefixes, IPv4 and IPv6, as
// sent (`203.0.113.7`, `2001:db8::/32`). Parsed here, without node:net, so
// the SDK, the console and the service agree on what is an address; an
// IPv4-mapped IPv6 address (`::ffff:203.0.113.7`) is its IPv4 address.

/** One entry: the address's bytes (4 or 16) and how many leading bits must match. */
export interface IpPrefix {
  readonly bytes: Uint8Array;
  readonly bits: number;
}

/** Most entries in one token's list (OKX's limit). */
export const MAX_ALLOWED_IPS = 20;

function ipv4Bytes(text: string): Uint8Array | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) {
    return undefined;
  }
  const bytes = new Uint8Array(4);
  for (const [i, part] of parts.entries()) {
    // Decimal only, no leading zero (`010` is octal to some parsers).
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) {
      return undefined;
    }
    bytes[i] = Number(part);
  }
  return bytes;
}

function ipv6Bytes(text: string): Uint8Array | undefined {
  let head = text;
  let tail4: Uint8Array | undefined;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    tail4 = ipv4Bytes(text.slice(lastColon + 1));
    if (tail4 === undefined) {
      return undefined;
    }
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split("::");
  if (halves.length > 2) {
    return undefined;
  }
  const groups = (half: string | undefined) =>
    half === undefined || half === "" ? [] : half.split(":");
  const left = groups(halves[0]);
  const right = groups(halves[1]);
  const count = left.length + right.length;
  if (halves.length === 1 ? count !== 8 : count > 7) {
    return undefined;
  }
  const all = [...left, ...Array<string>(8 - count).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  for (const [i, group] of all.entries()) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) {
      return undefined;
    }
    const value = Number.parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  }
  if (tail4 !== undefined) {
    bytes.set(tail4, 12);
  }
  return bytes;
}

const MAPPED_HEAD = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** The bytes of an address, an IPv4-mapped IPv6 one as its IPv4 bytes; undefined for anything else (a zone, a port). */
export function parseIpAddress(text: string): Uint8Array | undefined {
  if (text.length > 45) {
    return undefined;
  }
  const bytes = text.includes(":") ? ipv6Bytes(text) : ipv4Bytes(text);
  if (bytes !== undefined && bytes.length === 16 && MAPPED_HEAD.every((b, i) => bytes[i] === b)) {
    return bytes.slice(12);
  }
  return bytes;
}

/**
 * An entry of an allow-list: an address (all its bits) or `<address>/<bits>`
 * whose bits past the prefix are zero (`10.0.0.1/8` is refused: it reads as a
 * mistake). Undefined for anything else.
 */
export function parseIpPrefix(text: string): IpPrefix | undefined {
  const slash = text.indexOf("/");
  const address = parseIpAddress(slash < 0 ? text : text.slice(0, slash));
  if (address === undefined) {
    return undefined;
  }
  const width = address.length * 8;
  if (slash < 0) {
    return { bytes: address, bits: width };
  }
  const bitsText = text.slice(slash + 1);
  // A mapped IPv6 prefix counts its bits from the IPv6 address's start.
  const offset = address.length === 4 && text.includes(":") ? 96 : 0;
  const stated = /^(?:0|[1-9]\d{0,2})$/.test(bitsText) ? Number(bitsText) : -1;
  const bits = stated - offset;
  if (stated < 0 || bits < 0 || bits > width) {
    return undefined;
  }
  for (let bit = bits; bit < width; bit++) {
    if (((address[bit >> 3] ?? 0) & (0x80 >> (bit & 7))) !== 0) {
      return undefined;
    }
  }
  return { bytes: address, bits };
}

/** True when `address` (parseIpAddress's bytes) is inside `prefix`. */
export function prefixContains(prefix: IpPrefix, address: Uint8Array): boolean {
  if (prefix.bytes.length !== address.length) {
    return false;
  }
  const whole = prefix.bits >> 3;
  for (let i = 0; i < whole; i++) {
    if (prefix.bytes[i] !== address[i]) {
      return false;
    }
  }
  const rest = prefix.bits & 7;
  if (rest === 0) {
    return true;
  }
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((prefix.bytes[whole] ?? 0) & mask) === ((address[whole] ?? 0) & mask);
}

/** True when the address text is inside one of the prefixes; false for text that is no address. */
export function allowListContains(prefixes: readonly IpPrefix[], addressText: string): boolean {
  const address = parseIpAddress(addressText);
  return address !== undefined && prefixes.some((p) => prefixContains(p, address));
}
