// A Muushig Arena bot in Go, standard library only, as a hosted bot is
// written from the protocol page alone: JSON Lines (the first byte it sends
// is '{'), the four ARENA_* variables, and for every request the first of
// its legal answers, which is always legal.
//
// -eat-mib N allocates and touches N MiB before it connects: a program the
// memory limit must stop.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
)

type message struct {
	Type    string            `json:"type"`
	Match   json.RawMessage   `json:"match,omitempty"`
	ID      json.RawMessage   `json:"id,omitempty"`
	Legal   []json.RawMessage `json:"legal,omitempty"`
	Code    string            `json:"code,omitempty"`
	Message string            `json:"message,omitempty"`
}

type action struct {
	Type   string          `json:"type"`
	Match  json.RawMessage `json:"match"`
	ID     json.RawMessage `json:"id"`
	Action json.RawMessage `json:"action"`
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// eat keeps every page of n MiB written, so the memory is really used.
func eat(n int) [][]byte {
	var kept [][]byte
	for i := 0; i < n; i++ {
		chunk := make([]byte, 1<<20)
		for j := 0; j < len(chunk); j += 4096 {
			chunk[j] = byte(i + 1)
		}
		kept = append(kept, chunk)
	}
	return kept
}

func main() {
	eatMiB := flag.Int("eat-mib", 0, "allocate and touch this many MiB first")
	flag.Parse()
	if *eatMiB > 0 {
		kept := eat(*eatMiB)
		fmt.Fprintf(os.Stderr, "ate %d MiB\n", len(kept))
	}
	address := net.JoinHostPort(env("ARENA_HOST", "127.0.0.1"), env("ARENA_PORT", "7000"))
	conn, err := net.Dial("tcp", address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go bot: cannot connect:", err)
		os.Exit(1)
	}
	defer conn.Close()
	out := json.NewEncoder(conn) // one object and a '\n' per call: a JSON line
	hello := map[string]any{"type": "hello", "protocol": 1, "token": os.Getenv("ARENA_TOKEN")}
	if name := os.Getenv("ARENA_NAME"); name != "" {
		hello["name"] = name
	}
	if raw := os.Getenv("ARENA_MAX_MATCHES"); raw != "" {
		if n, err := strconv.Atoi(raw); err == nil && n > 0 {
			hello["max_matches"] = n
		}
	}
	if err := out.Encode(hello); err != nil {
		fmt.Fprintln(os.Stderr, "go bot: cannot send hello:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "go bot: hello sent")
	lines := bufio.NewReaderSize(conn, 1<<16)
	answered := 0
	for {
		line, err := lines.ReadBytes('\n') // a server line may be up to 1 MiB
		if err != nil {
			fmt.Fprintf(os.Stderr, "go bot: connection ended after %d answers\n", answered)
			return
		}
		var msg message
		if err := json.Unmarshal(line, &msg); err != nil {
			fmt.Fprintln(os.Stderr, "go bot: not JSON:", err)
			continue
		}
		switch msg.Type {
		case "request":
			if len(msg.Legal) == 0 {
				fmt.Fprintln(os.Stderr, "go bot: a request with no legal answer")
				continue
			}
			reply := action{Type: "action", Match: msg.Match, ID: msg.ID, Action: msg.Legal[0]}
			if err := out.Encode(reply); err != nil {
				fmt.Fprintln(os.Stderr, "go bot: cannot answer:", err)
				return
			}
			answered++
		case "error":
			fmt.Fprintf(os.Stderr, "go bot: server error %s: %s\n", msg.Code, msg.Message)
		case "bye":
			fmt.Fprintf(os.Stderr, "go bot: bye after %d answers\n", answered)
			return
		}
	}
}
