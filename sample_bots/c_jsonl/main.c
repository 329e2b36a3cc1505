/* Sample Muushig Arena bot in C11 speaking the JSON Lines encoding.
 *
 *   ./bot --host 127.0.0.1 --port 7000 --token TOKEN --name cbot [--max-matches N]
 *
 * Options may come from ARENA_HOST, ARENA_PORT, ARENA_TOKEN, ARENA_NAME.
 * The first byte sent is '{', so the server speaks JSON Lines both ways. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "strategy.h"

#define MAX_LINE (1u << 20)     /* the server's lines are at most 1 MiB */
#define PENDING_SLOTS 16        /* recent requests kept for illegal_action retries */

typedef struct {
    const char *host, *port, *token, *name;
    long max_matches;
} options;

typedef struct {
    int used;
    long id;
    char *match;
    char *fallback; /* legal[0] as JSON, the answer of last resort */
} pending;

typedef enum { END_DROPPED, END_BYE, END_FATAL } session_end;

static pending slots[PENDING_SLOTS];
static size_t next_slot;
static long matches_done, active_matches;

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("[cbot] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

static int send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_line(int fd, sbuf *b) {
    sb_add(b, "\n", 1);
    return send_all(fd, b->data, b->len);
}

static int connect_to(const options *o) {
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(o->host, o->port, &hints, &res);
    if (rc != 0) {
        say("cannot resolve %s: %s", o->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static int send_action(int fd, const char *match, long id, const char *action_json) {
    sbuf b;
    char tmp[32];
    sb_init(&b);
    sb_puts(&b, "{\"type\":\"action\",\"match\":");
    sb_json_string(&b, match, strlen(match));
    snprintf(tmp, sizeof tmp, ",\"id\":%ld", id);
    sb_puts(&b, tmp);
    sb_puts(&b, ",\"action\":");
    sb_puts(&b, action_json);
    sb_puts(&b, "}");
    int rc = send_line(fd, &b);
    sb_free(&b);
    return rc;
}

static void forget(pending *p) {
    free(p->match);
    free(p->fallback);
    memset(p, 0, sizeof *p);
}

static void remember(const char *match, long id, const jval *legal) {
    pending *p = &slots[next_slot];
    next_slot = (next_slot + 1) % PENDING_SLOTS;
    forget(p);
    sbuf b;
    sb_init(&b);
    sb_json_value(&b, legal->items[0]);
    p->used = 1;
    p->id = id;
    p->match = strdup(match);
    p->fallback = b.data; /* ownership moves to the slot */
}

static int on_request(int fd, const jval *msg) {
    const char *match = json_get_str(msg, "match");
    long id;
    const jval *legal = json_get(msg, "legal");
    if (!match || !json_get_int(msg, "id", &id) || !legal || legal->type != J_ARR || legal->count == 0) {
        say("ignoring a request without match, id or legal");
        return 0;
    }
    const jval *pick = choose(json_get_str(msg, "phase"), legal, json_get(msg, "state"));
    sbuf b;
    sb_init(&b);
    sb_json_value(&b, pick ? pick : legal->items[0]);
    remember(match, id, legal);
    int rc = send_action(fd, match, id, b.data);
    sb_free(&b);
    return rc;
}

static int on_error(int fd, const jval *msg) {
    const char *code = json_get_str(msg, "code");
    say("error %s: %s", or_empty(code), or_empty(json_get_str(msg, "message")));
    if (!code) return 0;
    if (strcmp(code, "illegal_action") == 0) {
        long id;
        const char *match = json_get_str(msg, "match"); /* not always present */
        if (!json_get_int(msg, "id", &id)) return 0;
        for (size_t i = 0; i < PENDING_SLOTS; i++) {
            pending *p = &slots[i];
            if (p->used && p->id == id && (!match || strcmp(match, p->match) == 0)) {
                int rc = send_action(fd, p->match, p->id, p->fallback);
                forget(p);
                return rc;
            }
        }
        return 0;
    }
    const char *fatal[] = {"auth_failed", "unsupported_protocol", "expected_hello", "hello_timeout", "malformed",
                           "frame_too_large"};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        if (strcmp(code, fatal[i]) == 0) return 2;
    return 0;
}

/* Returns 0 to go on, 1 when the bot is done (bye, or enough matches), 2 on a fatal error, -1 on a send error. */
static int handle_line(int fd, const options *o, const char *line, size_t len) {
    const char *err = NULL;
    jval *msg = json_parse(line, len, &err);
    if (!msg) {
        say("unreadable line from the server: %s", or_empty(err));
        return 0;
    }
    int rc = 0;
    const char *type = json_get_str(msg, "type");
    if (!type) {
        /* not a message: ignore */
    } else if (strcmp(type, "welcome") == 0) {
        say("welcome as %s on %s", or_empty(json_get_str(msg, "bot")), or_empty(json_get_str(msg, "server")));
    } else if (strcmp(type, "match_start") == 0) {
        active_matches++;
        say("match %s started", or_empty(json_get_str(msg, "match")));
    } else if (strcmp(type, "request") == 0) {
        rc = on_request(fd, msg);
    } else if (strcmp(type, "error") == 0) {
        rc = on_error(fd, msg);
    } else if (strcmp(type, "match_end") == 0) {
        matches_done++;
        if (active_matches > 0) active_matches--;
        say("match %s over", or_empty(json_get_str(msg, "match")));
        if (o->max_matches > 0 && matches_done >= o->max_matches && active_matches == 0) {
            sbuf b;
            sb_init(&b);
            sb_puts(&b, "{\"type\":\"bye\"}");
            send_line(fd, &b);
            sb_free(&b);
            rc = 1;
        }
    } else if (strcmp(type, "bye") == 0) {
        rc = 1;
    }
    /* "event" and unknown types need nothing: every request carries the full state. */
    json_free(msg);
    return rc;
}

static session_end run_session(const options *o) {
    int fd = connect_to(o);
    if (fd < 0) {
        say("cannot connect to %s:%s", o->host, o->port);
        return END_DROPPED;
    }
    active_matches = 0;
    sbuf hello;
    sb_init(&hello);
    sb_puts(&hello, "{\"type\":\"hello\",\"protocol\":1,\"token\":");
    sb_json_string(&hello, o->token, strlen(o->token));
    sb_puts(&hello, ",\"name\":");
    sb_json_string(&hello, o->name, strlen(o->name));
    if (o->max_matches > 0) {
        /* The server says bye after that many (those left after a reconnect). */
        char count[48];  /* ",\"max_matches\":" and any long */
        long left = o->max_matches - matches_done;
        snprintf(count, sizeof count, ",\"max_matches\":%ld", left > 0 ? left : 1);
        sb_puts(&hello, count);
    }
    sb_puts(&hello, "}");
    int rc = send_line(fd, &hello);
    sb_free(&hello);

    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    session_end end = END_DROPPED;
    while (rc == 0 && buf) {
        if (len == cap) {
            if (cap > MAX_LINE) {
                say("a line from the server is over 1 MiB; dropping the connection");
                break;
            }
            cap *= 2;
            char *grown = realloc(buf, cap);
            if (!grown) break;
            buf = grown;
        }
        ssize_t n = recv(fd, buf + len, cap - len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
        size_t start = 0;
        for (size_t i = len - (size_t)n; i < len && rc == 0; i++) {
            if (buf[i] != '\n') continue;
            rc = handle_line(fd, o, buf + start, i - start);
            start = i + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
    }
    if (rc == 1) end = END_BYE;
    if (rc == 2) end = END_FATAL;
    free(buf);
    close(fd);
    return end;
}

static const char *arg_or_env(const char *value, const char *env, const char *fallback) {
    if (value) return value;
    const char *e = getenv(env);
    return e && *e ? e : fallback;
}

int main(int argc, char **argv) {
    const char *host = NULL, *port = NULL, *token = NULL, *name = NULL;
    options o = {0};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value) { fprintf(stderr, "option %s needs a value\n", argv[i]); return 2; }
        if (strcmp(argv[i], "--host") == 0) host = value;
        else if (strcmp(argv[i], "--port") == 0) port = value;
        else if (strcmp(argv[i], "--token") == 0) token = value;
        else if (strcmp(argv[i], "--name") == 0) name = value;
        else if (strcmp(argv[i], "--max-matches") == 0) o.max_matches = strtol(value, NULL, 10);
        else { fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
        i++;
    }
    o.host = arg_or_env(host, "ARENA_HOST", "127.0.0.1");
    o.port = arg_or_env(port, "ARENA_PORT", "7000");
    o.token = arg_or_env(token, "ARENA_TOKEN", "");
    o.name = arg_or_env(name, "ARENA_NAME", "cbot");
    /* check-bot and arena runs may ask for N matches through the environment. */
    if (o.max_matches == 0 && getenv("ARENA_MAX_MATCHES")) o.max_matches = strtol(getenv("ARENA_MAX_MATCHES"), NULL, 10);

    int reconnects_left = 1;
    for (;;) {
        session_end end = run_session(&o);
        if (end == END_BYE) return 0;
        if (end == END_FATAL) return 1;
        if (o.max_matches > 0 && matches_done >= o.max_matches) return 0;
        if (reconnects_left-- <= 0) {
            say("connection lost again; giving up");
            return 1;
        }
        say("connection lost; reconnecting once");
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}
