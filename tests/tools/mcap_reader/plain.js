// Test-only, for read.js and messages.js: a decoded message as plain JSON
// values (typed arrays as arrays, 64-bit integers as strings).
"use strict";

function plain(value) {
  if (typeof value === "bigint") return value.toString();
  if (ArrayBuffer.isView(value)) return Array.from(value, plain);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

module.exports = { plain };
