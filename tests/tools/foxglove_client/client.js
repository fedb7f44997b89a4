// Test-only: a Foxglove WebSocket client (@foxglove/ws-protocol's
// FoxgloveClient over the `ws` package, as the Foxglove app speaks it) for
// tests/tools/test_foxglove.cpp. Messages are decoded with the schema the
// server advertises (@foxglove/rosmsg, @foxglove/rosmsg2-serialization).
//
// Usage: node client.js MODE 'JSON options'
//   watch    subscribe to topics, decode and count what comes (optionally
//            stop reading for a while: a stalled client)
//   publish  clientPublish into a topic, and the advertisements it must refuse
//   hostile  raw WebSocket connections sending what the protocol forbids
// Prints "subscribed" (watch) once its subscriptions are sent, then one line
// "result {JSON}"; exits 0 unless the client itself failed.
"use strict";

const WebSocket = require("ws");
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const { parse: parseMessageDefinition } = require("@foxglove/rosmsg");
const { MessageReader, MessageWriter } = require("@foxglove/rosmsg2-serialization");

const SUBPROTOCOL = FoxgloveClient.SUPPORTED_SUBPROTOCOL;

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// JSON for decoded values: 64-bit integers as strings, long arrays elided.
function plain(value) {
  if (typeof value === "bigint") return value.toString();
  if (ArrayBuffer.isView(value)) {
    return value.length > 32 ? { length: value.length } : Array.from(value, plain);
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function finish(result) {
  process.stdout.write("result " + JSON.stringify(result) + "\n", () => process.exit(0));
}

function connect(url) {
  const ws = new WebSocket(url, [SUBPROTOCOL], { maxPayload: 64 * 1024 * 1024 });
  return { ws, client: new FoxgloveClient({ ws }) };
}

// ---- watch ----------------------------------------------------------------
// Options: url, subscribe: [topic], done: {topic: last seq expected},
// timeout_ms, pause: {after_ms, for_ms} (after the first message),
// done_count: {topic: messages expected}, appear: topic (wait for it to be
// advertised, then unadvertised; no subscription needed),
// unsubscribe_after: {topic: n messages}.
async function watch(o) {
  const { ws, client } = connect(o.url);
  const started = Date.now();
  const channels = new Map(); // id -> channel
  const readers = new Map(); // channel id -> MessageReader
  const subs = new Map(); // subscription id -> topic
  const topics = {}; // topic -> stats
  const statuses = [];
  const advertised = [];
  const unadvertised = [];
  let serverInfo = null;
  let subscribed = false;
  let paused = null;
  let closed = null;
  let errors = [];
  const wanted = new Set(o.subscribe ?? []);

  const stats = (topic) =>
    (topics[topic] ??= {
      count: 0,
      first: null,
      last_seq: null,
      gaps: 0,
      out_of_order: 0,
      pixel_errors: 0,
      ts_not_after_stamp: 0,
      ts_lag_max_ms: 0,
      decode_errors: 0,
      unsubscribed: false,
    });

  const done = () => {
    if (o.appear) return unadvertised.includes(o.appear);
    if (!o.done && !o.done_count) return false;
    return (
      Object.entries(o.done ?? {}).every(([t, seq]) => topics[t] && topics[t].last_seq >= seq) &&
      Object.entries(o.done_count ?? {}).every(([t, n]) => topics[t] && topics[t].count >= n)
    );
  };

  const end = (why) => {
    finish({
      why,
      server_info: serverInfo,
      channels: [...channels.values()],
      advertised,
      unadvertised,
      topics,
      statuses,
      paused,
      closed,
      errors,
      elapsed_ms: Date.now() - started,
    });
  };

  const maybeSubscribe = () => {
    if (subscribed) return;
    if (wanted.size === 0) {
      // Nothing to subscribe to: ready once the first advertise came.
      subscribed = true;
      process.stdout.write("subscribed\n");
      return;
    }
    const have = [...channels.values()].filter((c) => wanted.has(c.topic));
    if (have.length < wanted.size) return;
    for (const c of have) {
      readers.set(c.id, new MessageReader(parseMessageDefinition(c.schema, { ros2: true })));
      subs.set(client.subscribe(c.id), c.topic);
      stats(c.topic);
    }
    subscribed = true;
    process.stdout.write("subscribed\n");
  };

  client.on("serverInfo", (info) => (serverInfo = info));
  client.on("status", (s) => statuses.push({ level: s.level, message: s.message, id: s.id }));
  client.on("error", (e) => errors.push(String(e && e.message ? e.message : e)));
  client.on("close", (e) => {
    closed = { code: e.code, reason: String(e.reason ?? "") };
    end("closed");
  });
  client.on("advertise", (list) => {
    for (const c of list) {
      channels.set(c.id, c);
      advertised.push(c.topic);
    }
    maybeSubscribe();
  });
  client.on("unadvertise", (ids) => {
    for (const id of ids) {
      const c = channels.get(id);
      if (c) unadvertised.push(c.topic);
      channels.delete(id);
    }
    if (done()) end("done");
  });
  client.on("message", (m) => {
    const topic = subs.get(m.subscriptionId);
    if (topic === undefined) {
      errors.push(`message for unknown subscription ${m.subscriptionId}`);
      return;
    }
    const s = stats(topic);
    if (s.unsubscribed) {
      s.after_unsubscribe = (s.after_unsubscribe ?? 0) + 1;
      return;
    }
    const channelId = [...channels.values()].find((c) => c.topic === topic)?.id;
    let msg;
    try {
      msg = readers.get(channelId).readMessage(m.data);
    } catch (e) {
      s.decode_errors++;
      return;
    }
    s.count++;
    if (s.first === null) s.first = plain(msg);
    if (msg.seq !== undefined) {
      const seq = Number(msg.seq);
      if (s.last_seq !== null) {
        if (seq <= s.last_seq) s.out_of_order++;
        else s.gaps += seq - s.last_seq - 1;
      }
      s.last_seq = seq;
      if (msg.pixels !== undefined) {
        const p = msg.pixels;
        if (p[0] !== (seq & 255) || p[p.length - 1] !== ((seq * 7) & 255)) s.pixel_errors++;
      }
    }
    if (msg.stamp_ns !== undefined) {
      // The messageData timestamp is the sample's publish_time_ns, taken in
      // publish() after the publisher wrote stamp_ns.
      const lag = m.timestamp - BigInt(msg.stamp_ns);
      if (lag < 0n) s.ts_not_after_stamp++;
      else s.ts_lag_max_ms = Math.max(s.ts_lag_max_ms, Number(lag / 1000000n));
    }
    if (o.unsubscribe_after && o.unsubscribe_after[topic] === s.count) {
      for (const [id, t] of subs) if (t === topic) client.unsubscribe(id);
      s.unsubscribed = true;
    }
    if (o.pause && paused === null) {
      paused = { started_ms: null, ended_ms: null };
      setTimeout(() => {
        ws._socket.pause(); // reads nothing: the server's sends back up
        paused.started_ms = Date.now() - started;
        setTimeout(() => {
          paused.ended_ms = Date.now() - started;
          ws._socket.resume();
        }, o.pause.for_ms);
      }, o.pause.after_ms);
    }
    if (done()) end("done");
  });
  setTimeout(() => end("timeout"), o.timeout_ms ?? 20000);
}

// ---- publish --------------------------------------------------------------
// Options: url, topic, schema_name, count, interval_ms. Publishes `count`
// poses {seq: i, x: i / 2, ...} on a client channel, then tries what must
// be refused and reports every status it got.
async function publish(o) {
  const { client } = connect(o.url);
  const statuses = [];
  const channels = new Map();
  client.on("status", (s) => statuses.push({ level: s.level, message: s.message }));
  client.on("error", () => {});
  const target = await new Promise((resolve, reject) => {
    client.on("advertise", (list) => {
      for (const c of list) channels.set(c.topic, c);
      if (channels.has(o.topic)) resolve(channels.get(o.topic));
    });
    client.on("close", () => reject(new Error("closed before the topic was advertised")));
  });
  const writer = new MessageWriter(parseMessageDefinition(target.schema, { ros2: true }));
  const id = client.advertise({ topic: o.topic, encoding: "cdr", schemaName: o.schema_name });
  await sleep(100);
  for (let i = 0; i < o.count; i++) {
    const frame = new Uint8Array(23);
    frame.set(new TextEncoder().encode("fox"));
    const cdr = writer.writeMessage({
      seq: BigInt(i),
      stamp_ns: 0n,
      x: i / 2,
      y: -i,
      z: 0.25,
      ok: i % 2 === 0,
      frame,
    });
    client.sendMessage(id, cdr);
    await sleep(o.interval_ms);
  }
  const refused = [];
  const expectRefusal = async (what, act) => {
    const before = statuses.length;
    act();
    for (let t = 0; t < 100 && statuses.length === before; t++) await sleep(10);
    refused.push({ what, status: statuses.slice(before) });
  };
  await expectRefusal("schema", () =>
    client.advertise({ topic: o.topic, encoding: "cdr", schemaName: "other/msg/Pose" }),
  );
  await expectRefusal("topic", () =>
    client.advertise({ topic: "no/such/topic", encoding: "cdr", schemaName: o.schema_name }),
  );
  await expectRefusal("encoding", () =>
    client.advertise({ topic: o.topic, encoding: "json", schemaName: o.schema_name }),
  );
  await expectRefusal("truncated", () => client.sendMessage(id, new Uint8Array([0, 1, 0, 0, 7])));
  await expectRefusal("unadvertised", () => client.sendMessage(4242, new Uint8Array(8)));
  await sleep(200);
  client.close();
  finish({ refused, statuses, topics: [...channels.keys()].sort() });
}

// ---- hostile --------------------------------------------------------------
// Options: url, max_clients. Each case on a raw connection; then a good
// client that must still be served (subscribes to `alive_topic`).
function rawConnect(url, protocols = [SUBPROTOCOL]) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols);
    const texts = [];
    let closeInfo = null;
    ws.on("message", (data, isBinary) => {
      if (!isBinary) texts.push(JSON.parse(data.toString()));
    });
    ws.on("close", (code, reason) => (closeInfo = { code, reason: reason.toString() }));
    ws.on("open", () => resolve({ ws, texts, closed: () => closeInfo, refused: null }));
    ws.on("unexpected-response", (req, res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ ws: null, refused: { status: res.statusCode, body } }));
    });
    ws.on("error", (e) => resolve({ ws: null, refused: { error: String(e.message) } }));
  });
}

async function statusesAfter(conn, send, count = 1) {
  const before = conn.texts.filter((t) => t.op === "status").length;
  send(conn.ws);
  for (let t = 0; t < 200; t++) {
    const now = conn.texts.filter((t) => t.op === "status");
    if (now.length >= before + count) return now.slice(before).map((s) => s.level + ":" + s.message);
    await sleep(10);
  }
  return [];
}

async function hostile(o) {
  const result = {};
  // Not WebSocket at all: a plain HTTP GET.
  result.plain_http = await new Promise((resolve) => {
    const http = require("node:http");
    http
      .get(o.url.replace("ws://", "http://"), (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode, body }));
      })
      .on("error", (e) => resolve({ error: String(e.message) }));
  });
  result.no_subprotocol = (await rawConnect(o.url, [])).refused;
  result.wrong_subprotocol = (await rawConnect(o.url, ["something.else"])).refused;

  const c = await rawConnect(o.url);
  while (c.texts.length < 2) await sleep(10); // serverInfo, advertise
  const channel = c.texts.find((t) => t.op === "advertise").channels[0];
  const text = (s) => (ws) => ws.send(s);
  const binary = (bytes) => (ws) => ws.send(Buffer.from(bytes));
  const cases = {
    malformed_json: text("{op: subscribe"),
    not_an_object: text("[1, 2, 3]"),
    no_op: text('{"subscriptions": []}'),
    unknown_op: text('{"op": "launchRocket"}'),
    unsupported_op: text('{"op": "getParameters", "parameterNames": []}'),
    subscribe_unknown_channel: text('{"op":"subscribe","subscriptions":[{"id":1,"channelId":99999}]}'),
    subscribe_bad_id: text('{"op":"subscribe","subscriptions":[{"id":"one","channelId":1}]}'),
    subscribe_negative_id: text('{"op":"subscribe","subscriptions":[{"id":-4,"channelId":1}]}'),
    subscriptions_not_array: text('{"op":"subscribe","subscriptions":5}'),
    unsubscribe_unknown: text('{"op":"unsubscribe","subscriptionIds":[77]}'),
    unadvertise_unknown: text('{"op":"unadvertise","channelIds":[12]}'),
    advertise_missing_fields: text('{"op":"advertise","channels":[{"id":1}]}'),
    binary_empty: binary([]),
    binary_unknown_opcode: binary([7, 1, 2, 3]),
    binary_short: binary([1, 0, 0]),
    binary_unknown_channel: binary([1, 9, 0, 0, 0, 0, 1, 0, 0]),
    binary_service_call: binary([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
  };
  result.statuses = {};
  for (const [name, send] of Object.entries(cases)) result.statuses[name] = await statusesAfter(c, send);
  // A duplicate subscription id: the first is taken, the second refused.
  result.statuses.duplicate_subscription = await statusesAfter(
    c,
    text(
      JSON.stringify({
        op: "subscribe",
        subscriptions: [
          { id: 5, channelId: channel.id },
          { id: 5, channelId: channel.id },
        ],
      }),
    ),
  );
  result.still_open_after_garbage = c.closed() === null;

  // Too many clients: fill every slot, the next is refused.
  const held = [c];
  for (let i = 1; i < o.max_clients; i++) held.push(await rawConnect(o.url));
  result.held_open = held.filter((h) => h.ws !== null).length;
  result.one_too_many = (await rawConnect(o.url)).refused;
  for (const h of held.slice(1)) h.ws?.close();

  // A frame over the server's read limit: the connection is closed (1009).
  c.ws.send(Buffer.alloc(17 * 1024 * 1024, 1));
  for (let t = 0; t < 300 && c.closed() === null; t++) await sleep(10);
  result.oversized = c.closed();
  await sleep(100);

  // Nothing above disturbed the others: a good client is served.
  result.alive = await new Promise((resolve) => {
    const { client } = connect(o.url);
    client.on("error", () => {});
    client.on("advertise", (list) => {
      const ch = list.find((x) => x.topic === o.alive_topic);
      if (ch) client.subscribe(ch.id);
    });
    client.on("message", () => {
      client.close();
      resolve(true);
    });
    setTimeout(() => resolve(false), 5000);
  });
  finish(result);
}

const [mode, json] = process.argv.slice(2);
const options = JSON.parse(json ?? "{}");
const modes = { watch, publish, hostile };
if (!modes[mode]) {
  process.stderr.write(`client.js: unknown mode '${mode}'\n`);
  process.exit(2);
}
modes[mode](options).catch((e) => {
  process.stderr.write(`client.js: ${e.stack ?? e}\n`);
  process.exit(1);
});
