// Test-only: reads an MCAP file with the reference reader (@mcap/core) and
// prints what it found as JSON, for tests/tools/test_bag_interop.cpp.
// Usage: node read.js FILE.mcap [--decode-all]
// Checks the summary CRC (McapIndexedReader), every chunk's CRC
// (readMessages with validateCrcs) and the data section CRC (DataEnd), and
// decodes each topic's first message with its ros2msg schema
// (@foxglove/rosmsg, @foxglove/rosmsg2-serialization); with --decode-all,
// every message (as "messages" per topic).
"use strict";

const fs = require("node:fs/promises");
const { McapIndexedReader } = require("@mcap/core");
const { crc32 } = require("@foxglove/crc");
const { parse: parseMessageDefinition } = require("@foxglove/rosmsg");
const { MessageReader } = require("@foxglove/rosmsg2-serialization");
const decompressLZ4 = require("@foxglove/wasm-lz4");
const zstd = require("@foxglove/wasm-zstd");
const { plain } = require("./plain");

function decoderFor(schema) {
  if (!schema || schema.encoding !== "ros2msg") return null;
  const text = new TextDecoder().decode(schema.data);
  return new MessageReader(parseMessageDefinition(text, { ros2: true }));
}

function hex(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

async function main() {
  const path = process.argv[2];
  const decodeAll = process.argv[3] === "--decode-all";
  if (!path) throw new Error("usage: node read.js FILE.mcap");
  await decompressLZ4.isLoaded;
  await zstd.isLoaded;
  const handle = await fs.open(path, "r");
  const size = (await handle.stat()).size;
  const readable = {
    size: async () => BigInt(size),
    read: async (offset, length) => {
      const buffer = new Uint8Array(Number(length));
      const { bytesRead } = await handle.read(buffer, 0, Number(length), Number(offset));
      if (bytesRead !== Number(length)) throw new Error(`short read at ${offset}`);
      return buffer;
    },
  };
  const reader = await McapIndexedReader.Initialize({
    readable,
    decompressHandlers: {
      lz4: (buffer, decompressedSize) => decompressLZ4(buffer, Number(decompressedSize)),
      zstd: (buffer, decompressedSize) => zstd.decompress(buffer, Number(decompressedSize)),
    },
  });

  // The data section CRC: every byte before the DataEnd record.
  let dataSectionCrcOk = null;
  if (reader.dataSectionCrc !== undefined && reader.dataSectionCrc !== 0) {
    const data = await readable.read(0n, reader.dataEndOffset);
    dataSectionCrcOk = crc32(data) === reader.dataSectionCrc;
  }

  const counts = new Map();
  const first = new Map();
  const decoded = new Map();
  const decoders = new Map();
  const sequences = new Map();
  const all = new Map();
  let total = 0;
  for await (const message of reader.readMessages({ validateCrcs: true })) {
    const channel = reader.channelsById.get(message.channelId);
    counts.set(channel.topic, (counts.get(channel.topic) ?? 0) + 1);
    if (!decoders.has(channel.schemaId)) {
      decoders.set(channel.schemaId, decoderFor(reader.schemasById.get(channel.schemaId)));
    }
    const decoder = decoders.get(channel.schemaId);
    if (!first.has(channel.topic)) {
      first.set(channel.topic, hex(message.data));
      if (decoder) decoded.set(channel.topic, plain(decoder.readMessage(message.data)));
    }
    if (decodeAll && decoder) {
      if (!all.has(channel.topic)) all.set(channel.topic, []);
      all.get(channel.topic).push(plain(decoder.readMessage(message.data)));
    }
    if (!sequences.has(channel.topic)) sequences.set(channel.topic, []);
    sequences.get(channel.topic).push(message.sequence);
    ++total;
  }
  await handle.close();

  const topics = [...reader.channelsById.values()].map((channel) => {
    const schema = reader.schemasById.get(channel.schemaId);
    return {
      topic: channel.topic,
      message_encoding: channel.messageEncoding,
      metadata: Object.fromEntries(channel.metadata),
      schema_name: schema?.name ?? null,
      schema_encoding: schema?.encoding ?? null,
      schema_text: schema ? new TextDecoder().decode(schema.data) : null,
      count: counts.get(channel.topic) ?? 0,
      first_message_hex: first.get(channel.topic) ?? null,
      first_message: decoded.get(channel.topic) ?? null,
      sequences: sequences.get(channel.topic) ?? [],
      ...(decodeAll ? { messages: all.get(channel.topic) ?? [] } : {}),
    };
  });
  const stats = reader.statistics;
  console.log(
    JSON.stringify({
      profile: reader.header.profile,
      library: reader.header.library,
      message_count: total,
      statistics_message_count: stats ? Number(stats.messageCount) : null,
      chunk_count: reader.chunkIndexes.length,
      compressions: [...new Set(reader.chunkIndexes.map((c) => c.compression))],
      data_section_crc_ok: dataSectionCrcOk,
      topics,
    }),
  );
}

main().catch((error) => {
  console.error(`read.js: ${error.message}`);
  process.exit(1);
});
