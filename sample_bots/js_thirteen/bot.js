#!/usr/bin/env node
"use strict";
// Sample thirteen-card bot: msgpack framing (a 4-byte big-endian length, then
// one msgpack map), protocol version 1, "game": "thirteen" in the hello. Usage:
//   node bot.js --host 127.0.0.1 --port 7000 --token TOKEN --name jsthirteen [--max-matches N]
// Every option may come from the environment instead: ARENA_HOST, ARENA_PORT,
// ARENA_TOKEN, ARENA_NAME.

const net = require("node:net");
const { encode, decode } = require("@msgpack/msgpack");
const { arrange } = require("./strategy");

const MAX_SERVER_FRAME = 1 << 20; // the server's frames may be up to 1 MiB
const RECONNECT_DELAY_MS = 200;
const FATAL_CODES = new Set(["auth_failed", "unsupported_protocol", "expected_hello", "hello_timeout", "malformed", "frame_too_large"]);

function parseArgs(argv, env) {
  const opts = {
    host: env.ARENA_HOST || "127.0.0.1",
    port: Number(env.ARENA_PORT || 7000),
    token: env.ARENA_TOKEN || "",
    name: env.ARENA_NAME || "jsthirteen",
    maxMatches: Number(env.ARENA_MAX_MATCHES || 0), // check-bot sets it; the hello announces it
  };
  for (let i = 0; i < argv.length; i++) {
    const [key, inline] = argv[i].split("=", 2);
    const value = () => (inline !== undefined ? inline : argv[++i]);
    if (key === "--host") opts.host = value();
    else if (key === "--port") opts.port = Number(value());
    else if (key === "--token") opts.token = value();
    else if (key === "--name") opts.name = value();
    else if (key === "--max-matches") opts.maxMatches = Number(value());
    else {
      process.stderr.write(`unknown option ${argv[i]}\n`);
      process.exit(2);
    }
  }
  return opts;
}

const log = (...parts) => process.stderr.write(`[jsthirteen] ${parts.join(" ")}\n`);

// Splits the byte stream into msgpack messages.
class FrameReader {
  constructor() {
    this.buffer = Buffer.alloc(0);
  }
  push(chunk) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const messages = [];
    while (this.buffer.length >= 4) {
      const size = this.buffer.readUInt32BE(0);
      if (size === 0 || size > MAX_SERVER_FRAME) throw new Error(`bad frame length ${size}`);
      if (this.buffer.length < 4 + size) break;
      messages.push(decode(this.buffer.subarray(4, 4 + size)));
      this.buffer = this.buffer.subarray(4 + size);
    }
    return messages;
  }
}

class Bot {
  constructor(opts) {
    this.opts = opts;
    this.reconnectsLeft = 1;
    this.matchesDone = 0;
    this.rules = new Map(); // match id -> match_start.rules (the wheel flag matters)
    this.sent = new Map(); // "match/id" -> the arrangement sent, to send again after illegal_action
    this.leaving = false; // bye seen or sent: a close is expected
  }

  start() {
    const socket = net.createConnection({ host: this.opts.host, port: this.opts.port });
    const reader = new FrameReader();
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("connect", () => {
      const hello = { type: "hello", protocol: 1, token: this.opts.token, name: this.opts.name, game: "thirteen" };
      // max_matches: the server says bye after that many (those left after a reconnect).
      if (this.opts.maxMatches > 0) hello.max_matches = Math.max(1, this.opts.maxMatches - this.matchesDone);
      this.send(hello);
    });
    socket.on("data", (chunk) => {
      let messages;
      try {
        messages = reader.push(chunk);
      } catch (err) {
        log("cannot read the server:", err.message);
        socket.destroy();
        return;
      }
      for (const message of messages) this.handle(message);
    });
    socket.on("error", (err) => log("connection error:", err.message));
    socket.on("close", () => this.onClose());
  }

  send(message) {
    const body = encode(message);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    this.socket.write(Buffer.concat([head, Buffer.from(body.buffer, body.byteOffset, body.byteLength)]));
  }

  handle(message) {
    if (message === null || typeof message !== "object") return;
    switch (message.type) {
      case "welcome":
        log(`welcome as ${message.bot} on ${message.server}`);
        break;
      case "match_start":
        this.rules.set(message.match, message.rules || {});
        log(`match ${message.match}: seat ${message.seat}`);
        break;
      case "request": {
        // Every seat is asked at once; the request has constraints, not a legal list.
        const action = arrange(message.constraints, message.state, this.rules.get(message.match));
        this.sent.set(`${message.match}/${message.id}`, action);
        this.send({ type: "action", match: message.match, id: message.id, action });
        break;
      }
      case "error": {
        // illegal_action: the request stays open (the server plays its own
        // arrangement at the deadline); ours is never fouled, so send it once more.
        log(`error ${message.code}: ${message.message || ""}`);
        const key = `${message.match}/${message.id}`;
        if (message.code === "illegal_action" && this.sent.has(key)) {
          this.send({ type: "action", match: message.match, id: message.id, action: this.sent.get(key) });
          this.sent.delete(key);
        }
        if (FATAL_CODES.has(message.code)) {
          this.leaving = true;
          this.fatal = true;
        }
        break;
      }
      case "match_end":
        this.onMatchEnd(message);
        break;
      case "bye":
        this.leave();
        break;
      default:
        break; // "event" (commit, arranged, showdown...): the state comes with each request
    }
  }

  onMatchEnd(message) {
    this.rules.delete(message.match);
    for (const key of this.sent.keys()) if (key.startsWith(`${message.match}/`)) this.sent.delete(key);
    this.matchesDone += 1;
    const result = message.result || {};
    log(`match ${message.match} over; totals ${JSON.stringify(result.totals)} ranks ${JSON.stringify(result.ranks)}`);
    if (this.opts.maxMatches > 0 && this.matchesDone >= this.opts.maxMatches && this.rules.size === 0) {
      this.send({ type: "bye" });
      this.leave();
    }
  }

  // Flush what is queued, then close our side completely (do not wait for the server).
  leave() {
    this.leaving = true;
    this.socket.end(() => this.socket.destroy());
  }

  onClose() {
    if (this.fatal) process.exit(1);
    const enough = this.opts.maxMatches > 0 && this.matchesDone >= this.opts.maxMatches;
    if (this.leaving || enough) process.exit(0);
    if (this.reconnectsLeft > 0) {
      this.reconnectsLeft -= 1;
      log("connection dropped; reconnecting once");
      setTimeout(() => this.start(), RECONNECT_DELAY_MS);
      return;
    }
    log("connection dropped again; giving up");
    process.exit(1);
  }
}

if (require.main === module) new Bot(parseArgs(process.argv.slice(2), process.env)).start();
