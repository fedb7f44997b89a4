// Test-only: checks ferry's shipped message definitions against ROS 2's own
// (@foxglove/rosmsg-msgs-common, ros2jazzy) for tests/tools/test_messages_interop.cpp.
// Usage: node messages.js CASES.json
// CASES.json: [{ros2, definition, value, cdr}] where `definition` is ferry's
// .msg text (ferry gen msg), `value` the sample's fields and `cdr` the hex of
// ferry's CDR of it. For each: the fields (names, types, arrays, bounds
// aside) equal ROS 2's, field for field, in every nested type; the CDR that
// @foxglove/rosmsg2-serialization writes for `value` with ROS 2's
// definitions is byte for byte ferry's; and ferry's bytes decode to `value`.
// Prints one JSON line per case: {ros2, ok, problems: [...]}.
"use strict";

const fs = require("node:fs");
const { ros2jazzy } = require("@foxglove/rosmsg-msgs-common");
const { parse } = require("@foxglove/rosmsg");
const { MessageWriter, MessageReader } = require("@foxglove/rosmsg2-serialization");
const { plain } = require("./plain");

// "pkg/msg/Name" -> "pkg/Name", the keys of ros2jazzy.
const short = (name) => name.replace("/msg/", "/");

function rosDefinitions(name) {
  const out = [];
  const seen = new Set();
  const visit = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    const d = ros2jazzy[n];
    if (!d) throw new Error(`ROS 2 has no ${n}`);
    out.push(d);
    for (const f of d.definitions) if (f.isComplex && !f.isConstant) visit(f.type);
  };
  visit(short(name));
  return out;
}

function fieldsOf(def) {
  return def.definitions
    .filter((f) => !f.isConstant)
    .map((f) => ({
      name: f.name,
      type: short(f.type),
      isArray: f.isArray === true,
      arrayLength: f.arrayLength ?? null,
      isComplex: f.isComplex === true,
    }));
}

function check(c) {
  const problems = [];
  const ros = rosDefinitions(c.ros2);
  const ours = parse(c.definition, { ros2: true });
  // ours[0] is the root (no name); the others are named pkg/msg/Name.
  const ourByName = new Map(ours.slice(1).map((d) => [short(d.name), d]));
  ourByName.set(short(c.ros2), ours[0]);
  for (const d of ros) {
    const mine = ourByName.get(short(d.name));
    if (!mine) {
      problems.push(`${d.name}: not in ferry's definition`);
      continue;
    }
    const a = JSON.stringify(fieldsOf(d));
    const b = JSON.stringify(fieldsOf(mine));
    if (a !== b) problems.push(`${d.name}: ROS 2 has ${a}, ferry has ${b}`);
  }
  const written = Buffer.from(new MessageWriter(ros).writeMessage(c.value)).toString("hex");
  if (written !== c.cdr) problems.push(`CDR differs: reference ${written}, ferry ${c.cdr}`);
  const bytes = Buffer.from(c.cdr, "hex");
  const decoded = plain(new MessageReader(ros).readMessage(bytes));
  if (JSON.stringify(decoded) !== JSON.stringify(c.value))
    problems.push(`decoded ${JSON.stringify(decoded)}, expected ${JSON.stringify(c.value)}`);
  return problems;
}

// --mcap FILE: every message of FILE decoded with ROS 2's definition of
// its schema name (not the schema text in the file); a `data` field is
// summarised as data_size and data_sum (sum of byte x (index % 7 + 1)).
async function readMcap(file) {
  const { McapIndexedReader } = require("@mcap/core");
  const handle = await fs.promises.open(file, "r");
  const readable = {
    size: async () => BigInt((await handle.stat()).size),
    read: async (offset, length) => {
      const buffer = new Uint8Array(Number(length));
      await handle.read(buffer, 0, Number(length), Number(offset));
      return buffer;
    },
  };
  const reader = await McapIndexedReader.Initialize({ readable });
  for await (const message of reader.readMessages()) {
    const channel = reader.channelsById.get(message.channelId);
    const schema = reader.schemasById.get(channel.schemaId);
    const decoded = plain(new MessageReader(rosDefinitions(schema.name)).readMessage(message.data));
    if (Array.isArray(decoded.data)) {
      let sum = 0; // at most 255 x 7 x 25 M: exact in a double
      decoded.data.forEach((b, i) => (sum += b * ((i % 7) + 1)));
      decoded.data_size = decoded.data.length;
      decoded.data_sum = sum;
      delete decoded.data;
    }
    console.log(JSON.stringify({ schema_name: schema.name, ...decoded }));
  }
  await handle.close();
}

if (process.argv[2] === "--mcap") {
  readMcap(process.argv[3]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
  return;
}

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
for (const c of cases) {
  let problems;
  try {
    problems = check(c);
  } catch (e) {
    problems = [String(e && e.stack ? e.stack : e)];
  }
  console.log(JSON.stringify({ ros2: c.ros2, ok: problems.length === 0, problems }));
}
