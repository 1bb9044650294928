import { type PemBlock, readPemBlocks } from "./pem-block.js";

// DER tags of the PKCS#8 structure (RFC 5958) as RFC 8410 fills it for Ed25519.
const SEQUENCE = 0x30;
const INTEGER = 0x02;
const OCTET_STRING = 0x04;
const OBJECT_IDENTIFIER = 0x06;
const ED25519_OID = "2b6570"; // 1.3.101.112
const SECRET_KEY_BYTES = 32;

/** Other algorithms' OIDs (hex of the DER value), so that the error can name the key's kind. */
const OTHER_ALGORITHMS: Readonly<Record<string, string>> = {
  "2b6571": "Ed448",
  "2b656e": "X25519",
  "2b656f": "X448",
  "2a864886f70d010101": "RSA",
  "2a864886f70d01010a": "RSA-PSS",
  "2a8648ce3d0201": "EC",
  "2a8648ce380401": "DSA",
};

/** Why a PEM block cannot be used, by its label; PRIVATE KEY (PKCS#8) is the one we read. */
const WRONG_LABELS: Readonly<Record<string, string>> = {
  "ENCRYPTED PRIVATE KEY":
    "the key is encrypted; write it unencrypted (openssl pkey -in KEY -out PLAIN) and keep that file private",
  "PUBLIC KEY": "this is a public key; signing needs the private key",
  "OPENSSH PRIVATE KEY":
    "an OpenSSH key file is not supported; use `perps-tokens keygen` or `openssl genpkey -algorithm ed25519`",
  "RSA PRIVATE KEY": "not an Ed25519 key (RSA)",
  "EC PRIVATE KEY": "not an Ed25519 key (EC)",
};

interface Element {
  tag: number;
  /** The value's bytes. */
  value: Uint8Array;
  /** Offset just past the element. */
  end: number;
}

/** Thrown with the caller's name, so the message says which SDK function refused the file. */
class KeyFileError extends TypeError {}

function fail(reason: string): never {
  throw new KeyFileError(reason);
}

/** One DER element at `offset` (definite lengths only, as DER requires). */
function readElement(der: Uint8Array, offset: number): Element {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined) {
    fail("the PKCS#8 data is truncated");
  }
  let start = offset + 2;
  if (length >= 0x80) {
    const count = length & 0x7f;
    // Four length bytes already exceed any key file; none means indefinite (BER, not DER).
    if (count === 0 || count > 3) {
      fail("the PKCS#8 data has an invalid length");
    }
    length = 0;
    for (let i = 0; i < count; i++) {
      const byte = der[start + i];
      if (byte === undefined) {
        fail("the PKCS#8 data is truncated");
      }
      length = length * 256 + byte;
    }
    start += count;
  }
  const end = start + length;
  if (end > der.length) {
    fail("the PKCS#8 data is truncated");
  }
  return { tag, value: der.subarray(start, end), end };
}

function expect(element: Element, tag: number, what: string): Uint8Array {
  if (element.tag !== tag) {
    fail(`not a PKCS#8 private key (${what} expected)`);
  }
  return element.value;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The 32-byte secret key of a PKCS#8 OneAsymmetricKey holding an Ed25519 key. */
function ed25519SecretKey(der: Uint8Array): Uint8Array {
  const outer = readElement(der, 0);
  if (outer.end !== der.length) {
    fail("not a PKCS#8 private key (data after the key)");
  }
  const body = expect(outer, SEQUENCE, "SEQUENCE");
  const version = readElement(body, 0);
  const versionValue = hex(expect(version, INTEGER, "version"));
  // v1 (0) is what OpenSSL and Node write; v2 (1) may add the public key after.
  if (versionValue !== "00" && versionValue !== "01") {
    fail("not a PKCS#8 private key (unknown version)");
  }
  const algorithm = readElement(body, version.end);
  const oid = readElement(expect(algorithm, SEQUENCE, "algorithm"), 0);
  const oidHex = hex(expect(oid, OBJECT_IDENTIFIER, "algorithm OID"));
  if (oidHex !== ED25519_OID) {
    fail(`not an Ed25519 key (${OTHER_ALGORITHMS[oidHex] ?? "unknown algorithm"})`);
  }
  const privateKey = readElement(body, algorithm.end);
  // RFC 8410: the PrivateKey OCTET STRING wraps a CurvePrivateKey OCTET STRING.
  const curveKey = readElement(expect(privateKey, OCTET_STRING, "private key"), 0);
  const secretKey = expect(curveKey, OCTET_STRING, "Ed25519 private key");
  if (curveKey.end !== privateKey.value.length || secretKey.length !== SECRET_KEY_BYTES) {
    fail("the Ed25519 private key is not 32 bytes");
  }
  return secretKey.slice();
}

/** An Ed25519 private key file, read and checked. */
export interface Ed25519KeyFile {
  /** The PKCS#8 DER of the key's PEM block (what WebCrypto's importKey "pkcs8" takes). */
  pkcs8: Uint8Array<ArrayBuffer>;
  /** The 32-byte secret key (seed) inside it. */
  secretKey: Uint8Array;
}

/**
 * Reads an unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----") holding an
 * Ed25519 key, as text or bytes, as `perps-tokens keygen` and `openssl genpkey
 * -algorithm ed25519` write it. Works in browsers (no Node.js crypto). Throws
 * a TypeError, its message starting with `caller`, naming the problem for
 * anything else: another key type, an encrypted key, a public key.
 */
export function readEd25519KeyFile(pem: string | Uint8Array, caller: string): Ed25519KeyFile {
  try {
    const text = typeof pem === "string" ? pem : new TextDecoder().decode(pem);
    let blocks: PemBlock[];
    try {
      blocks = readPemBlocks(text);
    } catch (err) {
      fail(err instanceof Error ? err.message : String(err));
    }
    // Parameter blocks come before the key in some files (`openssl ecparam -genkey`).
    const block = blocks.find((b) => b.label.endsWith(" KEY")) ?? blocks[0];
    if (block === undefined || block.label !== "PRIVATE KEY") {
      fail(WRONG_LABELS[block.label] ?? `a "${block.label}" PEM block is not a PKCS#8 private key`);
    }
    return { pkcs8: block.der, secretKey: ed25519SecretKey(block.der) };
  } catch (err) {
    throw err instanceof KeyFileError ? new TypeError(`${caller}: ${err.message}`) : err;
  }
}
