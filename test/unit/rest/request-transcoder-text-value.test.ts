import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScalarType } from "@bufbuild/protobuf";
import {
  enumFromText,
  scalarFromText,
  TextValueError,
} from "../../../src/rest/request-transcoder.js";
import { ColorSchema } from "../../gen/perps/gatewaytest/v1/gateway_test_pb.js";

function refuses(type: ScalarType, text: string, message: string | RegExp) {
  assert.throws(
    () => scalarFromText(type, text),
    (e) =>
      e instanceof TextValueError &&
      e.name === "TextValueError" &&
      e.message.match(message) !== null,
    `${ScalarType[type]} ${JSON.stringify(text)}`,
  );
}

describe("scalarFromText", () => {
  it("keeps strings as they are", () => {
    assert.equal(scalarFromText(ScalarType.STRING, ""), "");
    assert.equal(scalarFromText(ScalarType.STRING, "a b/ü"), "a b/ü");
  });

  it("reads true and false, and nothing else, as bools", () => {
    assert.equal(scalarFromText(ScalarType.BOOL, "true"), true);
    assert.equal(scalarFromText(ScalarType.BOOL, "false"), false);
    for (const text of ["1", "TRUE", "yes", ""]) {
      refuses(ScalarType.BOOL, text, "must be true or false");
    }
  });

  it("reads bytes from standard and URL-safe base64", () => {
    assert.deepEqual(scalarFromText(ScalarType.BYTES, "+/8="), new Uint8Array([0xfb, 0xff]));
    assert.deepEqual(scalarFromText(ScalarType.BYTES, "-_8"), new Uint8Array([0xfb, 0xff]));
    assert.deepEqual(scalarFromText(ScalarType.BYTES, ""), new Uint8Array([]));
    refuses(ScalarType.BYTES, "a b", "must be base64");
    refuses(ScalarType.BYTES, "ab===", "must be base64");
  });

  it("reads 32-bit integers within their range only", () => {
    assert.equal(scalarFromText(ScalarType.INT32, "-2147483648"), -(2 ** 31));
    assert.equal(scalarFromText(ScalarType.SINT32, "2147483647"), 2 ** 31 - 1);
    assert.equal(scalarFromText(ScalarType.UINT32, "4294967295"), 2 ** 32 - 1);
    assert.equal(scalarFromText(ScalarType.FIXED32, "0"), 0);
    refuses(ScalarType.INT32, "2147483648", "must be an integer from -2147483648 to 2147483647");
    refuses(ScalarType.UINT32, "-1", "must be an integer from 0 to 4294967295");
    refuses(ScalarType.UINT32, "4294967296", /from 0 to 4294967295/);
  });

  it("refuses integers that are not plain decimal digits", () => {
    for (const text of ["1.0", "1e3", "0x10", " 1", "+1", "", "-"]) {
      refuses(ScalarType.INT32, text, /must be an integer/);
      refuses(ScalarType.INT64, text, /must be an integer/);
    }
  });

  it("reads 64-bit integers exactly over their whole range, as bigint", () => {
    assert.equal(scalarFromText(ScalarType.INT64, "-9223372036854775808"), -(2n ** 63n));
    assert.equal(scalarFromText(ScalarType.SFIXED64, "9223372036854775807"), 2n ** 63n - 1n);
    assert.equal(scalarFromText(ScalarType.SINT64, "9007199254740993"), 9007199254740993n);
    assert.equal(scalarFromText(ScalarType.UINT64, "18446744073709551615"), 2n ** 64n - 1n);
    assert.equal(scalarFromText(ScalarType.FIXED64, "0"), 0n);
    refuses(ScalarType.INT64, "9223372036854775808", /from -9223372036854775808 to/);
    refuses(ScalarType.UINT64, "-1", "must be an integer from 0 to 18446744073709551615");
    refuses(ScalarType.UINT64, "18446744073709551616", /from 0 to/);
  });

  it("reads decimal and exponent numbers, and the JSON names of NaN and the infinities", () => {
    assert.equal(scalarFromText(ScalarType.DOUBLE, "1.5"), 1.5);
    assert.equal(scalarFromText(ScalarType.DOUBLE, "-.5e2"), -50);
    assert.equal(scalarFromText(ScalarType.DOUBLE, "3."), 3);
    assert.equal(scalarFromText(ScalarType.FLOAT, "1E-3"), 0.001);
    assert.ok(Number.isNaN(scalarFromText(ScalarType.DOUBLE, "NaN")));
    assert.equal(scalarFromText(ScalarType.FLOAT, "Infinity"), Number.POSITIVE_INFINITY);
    assert.equal(scalarFromText(ScalarType.DOUBLE, "-Infinity"), Number.NEGATIVE_INFINITY);
    for (const text of ["", "abc", "1,5", "0x1", "inf", "1e999", " 1"]) {
      refuses(ScalarType.DOUBLE, text, "must be a number");
    }
  });

  it("refuses a float beyond float32's range that a double can hold", () => {
    assert.equal(scalarFromText(ScalarType.DOUBLE, "1e39"), 1e39);
    assert.equal(scalarFromText(ScalarType.FLOAT, "3.4e38"), 3.4e38);
    refuses(ScalarType.FLOAT, "1e39", "must be a number");
    refuses(ScalarType.FLOAT, "-1e39", "must be a number");
  });
});

describe("enumFromText", () => {
  it("reads a value by its name or by its number", () => {
    assert.equal(enumFromText(ColorSchema, "COLOR_GREEN"), 2);
    assert.equal(enumFromText(ColorSchema, "1"), 1);
    assert.equal(enumFromText(ColorSchema, "0"), 0);
  });

  it("refuses unknown names and numbers, listing the names", () => {
    for (const text of ["COLOR_BLUE", "color_red", "3", "-1", ""]) {
      assert.throws(
        () => enumFromText(ColorSchema, text),
        new TextValueError("must be one of COLOR_UNSPECIFIED, COLOR_RED, COLOR_GREEN"),
        text,
      );
    }
  });
});
