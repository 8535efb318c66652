// Package contract is the target contract independent of how a model serves it: which path means
// what, the query's parsing, and the exact bytes of every answer (crates/servers/src/routes.rs;
// vectors/contract.json pins them).
package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"iolab/runtimes/go/internal/steps"
)

// Content types of the answers.
const (
	JSON        = "application/json"
	OctetStream = "application/octet-stream"
	Prometheus  = "text/plain; version=0.0.4"
)

// Fixed messages.
const (
	MissingSteps = "missing query parameter 'steps', e.g. /work?steps=sleep:100"
	ValueNeedsMc = "body=value answers the value of the last mc step, but steps has none: e.g. /work?steps=mc:test&body=value"
)

// Error is a request answered with Status and `{"ok":false,"error":Message}`.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf makes an Error.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{status, fmt.Sprintf(format, args...)}
}

// Work is a parsed /work request.
type Work struct {
	Step  steps.Step
	Value bool // body=value: answer the last mc step's bytes instead of the JSON
}

var configureHint = map[string]string{
	"sleep": "nothing (sleep is embedded)",
	"http":  "--http-backend URL",
	"pg":    "--pg URL",
	"mc":    "--mc HOST:PORT",
}

// NotConfigured is the 400 message for a step whose backend the target was not given.
func NotConfigured(kind string) string {
	return fmt.Sprintf("backend '%s' not configured: start the target with %s (see `iolab serve --help`)", kind, configureHint[kind])
}

// PercentDecode decodes %XX escapes and '+' (form encoding's space).
func PercentDecode(raw string) (string, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '%':
			if i+3 > len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return "", fmt.Errorf("bad percent-encoding in query at %d: expected %%XX with two hex digits", i)
			}
			out = append(out, unhex(raw[i+1])<<4|unhex(raw[i+2]))
			i += 3
		case '+':
			out = append(out, ' ')
			i++
		default:
			out = append(out, c)
			i++
		}
	}
	if !utf8.Valid(out) {
		return "", fmt.Errorf("query is not UTF-8 after percent-decoding")
	}
	return string(out), nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Param is the first value of `name` in the raw query, decoded; ok is false when absent.
func Param(query, name string) (value string, ok bool, err error) {
	if query == "" {
		return "", false, nil
	}
	for _, pair := range strings.Split(query, "&") {
		if rest, found := strings.CutPrefix(pair, name+"="); found {
			v, err := PercentDecode(rest)
			return v, true, err
		}
	}
	return "", false, nil
}

// ParseWork parses /work's query; every fault is a 400, in the Rust targets' order. A step naming
// a backend that is not configured is refused before any work runs, and counted as a call of that
// kind (as the Rust targets count it) through `countCall`.
func ParseWork(query string, configured func(string) bool, countCall func(string)) (Work, *Error) {
	text, ok, err := Param(query, "steps")
	if err != nil {
		return Work{}, &Error{400, err.Error()}
	}
	if !ok {
		return Work{}, &Error{400, MissingSteps}
	}
	step, err := steps.Parse(text)
	if err != nil {
		return Work{}, &Error{400, err.Error()}
	}
	body, ok, err := Param(query, "body")
	if err != nil {
		return Work{}, &Error{400, err.Error()}
	}
	if ok && body != "json" && body != "value" {
		return Work{}, Errorf(400, "query parameter 'body' is '%s': expected 'json' (the default) or 'value'", body)
	}
	value := ok && body == "value"
	if value && !step.Uses("mc") {
		return Work{}, &Error{400, ValueNeedsMc}
	}
	for _, kind := range steps.Kinds {
		if step.Uses(kind) && !configured(kind) {
			countCall(kind)
			return Work{}, &Error{400, NotConfigured(kind)}
		}
	}
	return Work{step, value}, nil
}

// OK is the 200 body of a finished /work.
func OK(model string, leaves int, elapsedMs float64) []byte {
	return fmt.Appendf(nil, `{"ok":true,"model":"%s","steps":%d,"elapsed_ms":%.3f}`, model, leaves, elapsedMs)
}

// ErrorBody is `{"ok":false,"error":"..."}` with serde_json's escapes.
func ErrorBody(message string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(message)
	return fmt.Appendf(nil, `{"ok":false,"error":%s}`, bytes.TrimRight(b.Bytes(), "\n"))
}

// Health is the body of /health.
func Health(model string) []byte { return fmt.Appendf(nil, `{"ok":true,"model":"%s"}`, model) }

// NotFound is the 404 answer's body.
func NotFound(path string) []byte {
	return ErrorBody(fmt.Sprintf("no such path '%s' (the contract has /work?steps=..., /health, /metrics)", path))
}

// MethodNotAllowed is the 405 answer's body.
func MethodNotAllowed(method string) []byte {
	return ErrorBody(fmt.Sprintf("method %s not allowed (use GET)", method))
}
