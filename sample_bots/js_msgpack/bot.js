#!/usr/bin/env node
"use strict";
// Sample Muushig Arena bot: msgpack framing (a 4-byte big-endian length, then
// one msgpack map), protocol version 1. Usage:
//   node bot.js --host 127.0.0.1 --port 7000 --token TOKEN --name jsbot [--max-matches N]
// Every option may come from the environment instead: ARENA_HOST, ARENA_PORT,
// ARENA_TOKEN, ARENA_NAME.

const net = require("node:net");
const { encode, decode } = require("@msgpack/msgpack");
const { choose } = require("./strategy");

const MAX_SERVER_FRAME = 1 << 20; // the server's frames may be up to 1 MiB
const RECONNECT_DELAY_MS = 200;
const FATAL_CODES = new Set(["auth_failed", "unsupported_protocol", "expected_hello", "hello_timeout", "malformed", "frame_too_large"]);

function parseArgs(argv, env) {
  const opts = {
    host: env.ARENA_HOST || "127.0.0.1",
    port: Number(env.ARENA_PORT || 7000),
    token: env.ARENA_TOKEN || "",
    name: env.ARENA_NAME || "jsbot",
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

const log = (...parts) => process.stderr.write(`[jsbot] ${parts.join(" ")}\n`);

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
    this.activeMatches = new Set();
    this.pending = new Map(); // "match/id" -> request, until answered
    this.leaving = false; // bye seen or sent: a close is expected
  }

  start() {
    const socket = net.createConnection({ host: this.opts.host, port: this.opts.port });
    const reader = new FrameReader();
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("connect", () => {
      const hello = { type: "hello", protocol: 1, token: this.opts.token, name: this.opts.name };
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

  answer(request, action) {
    this.send({ type: "action", match: request.match, id: request.id, action });
  }

  handle(message) {
    if (message === null || typeof message !== "object") return;
    switch (message.type) {
      case "welcome":
        log(`welcome as ${message.bot} on ${message.server}`);
        break;
      case "match_start":
        this.activeMatches.add(message.match);
        log(`match ${message.match}: seat ${message.seat}`);
        break;
      case "request": {
        this.pending.set(`${message.match}/${message.id}`, message);
        this.answer(message, choose(message.phase, message.legal, message.state));
        break;
      }
      case "error":
        this.onError(message);
        break;
      case "match_end":
        this.onMatchEnd(message);
        break;
      case "bye":
        this.leave();
        break;
      default:
        break; // "event" and anything newer: nothing to do, the state comes with each request
    }
  }

  onError(message) {
    log(`error ${message.code}: ${message.message || ""}`);
    if (message.code === "illegal_action") {
      // Fall back to the first legal answer; the error may or may not name the match.
      for (const [key, request] of this.pending) {
        if (request.id === message.id && (message.match === undefined || message.match === request.match)) {
          this.answer(request, request.legal[0]);
          this.pending.delete(key);
          return;
        }
      }
    } else if (FATAL_CODES.has(message.code)) {
      this.leaving = true;
      this.fatal = true;
    }
  }

  onMatchEnd(message) {
    this.activeMatches.delete(message.match);
    for (const key of [...this.pending.keys()]) if (key.startsWith(`${message.match}/`)) this.pending.delete(key);
    this.matchesDone += 1;
    const ranks = message.result && message.result.ranks;
    log(`match ${message.match} over; ranks ${JSON.stringify(ranks)}`);
    if (this.opts.maxMatches > 0 && this.matchesDone >= this.opts.maxMatches && this.activeMatches.size === 0) {
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
      this.pending.clear();
      log("connection dropped; reconnecting once");
      setTimeout(() => this.start(), RECONNECT_DELAY_MS);
      return;
    }
    log("connection dropped again; giving up");
    process.exit(1);
  }
}

new Bot(parseArgs(process.argv.slice(2), process.env)).start();
