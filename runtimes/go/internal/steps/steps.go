// Package steps is the workload language (crates/model/src/steps/parse.rs), parsed to the same tree,
// canonical text and error texts byte for byte (vectors/steps.json pins them).
//
//	steps := item (',' item)*            a top-level list runs in sequence
//	item  := seq(steps) | par(steps) | leaf
//	leaf  := cpu:N | sleep:MS | http:MS | pg:MS | mc:KEY
//
// Positions in errors are byte offsets, as in the Rust parser.
package steps

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits, as in crates/model/src/steps.
const (
	MaxDepth    = 16
	MaxLeaves   = 1_000
	MaxMs       = 3_600_000.0
	MaxCPUTerms = 100_000_000_000
	MaxKeyLen   = 250
	MaxInputLen = 16_384
)

// Kinds are the backend kinds, in the order /metrics lists them.
var Kinds = []string{"sleep", "http", "pg", "mc"}

// Op says what a Step is.
type Op int

// The step kinds.
const (
	CPU Op = iota
	IO
	Seq
	Par
)

// Step is one node of a workload.
type Step struct {
	Op       Op
	Terms    uint64 // CPU: Leibniz terms
	Kind     string // IO: sleep, http, pg, mc
	Micros   int64  // IO sleep/http/pg: the wait in microseconds
	Key      string // IO mc: the memcached key
	Children []Step // Seq, Par
}

// Error is a fault in a steps string; Error() is the contract's `steps: MESSAGE at POSITION`.
type Error struct {
	Message  string
	Position int
}

func (e *Error) Error() string { return fmt.Sprintf("steps: %s at %d", e.Message, e.Position) }

// Leaves counts the cpu and io steps.
func (s Step) Leaves() int {
	if s.Op == Seq || s.Op == Par {
		n := 0
		for _, c := range s.Children {
			n += c.Leaves()
		}
		return n
	}
	return 1
}

// Uses reports whether the workload calls backend `kind`.
func (s Step) Uses(kind string) bool {
	switch s.Op {
	case IO:
		return s.Kind == kind
	case Seq, Par:
		for _, c := range s.Children {
			if c.Uses(kind) {
				return true
			}
		}
	}
	return false
}

// MillisText is milliseconds as the canonical text: whole numbers bare, else up to 3 decimals.
func MillisText(micros int64) string {
	ms, frac := micros/1000, micros%1000
	if frac == 0 {
		return strconv.FormatInt(ms, 10)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%03d", ms, frac), "0")
}

// Canonical is the workload's canonical text.
func (s Step) Canonical() string {
	switch s.Op {
	case CPU:
		return fmt.Sprintf("cpu:%d", s.Terms)
	case IO:
		if s.Kind == "mc" {
			return "mc:" + s.Key
		}
		return s.Kind + ":" + MillisText(s.Micros)
	}
	parts := make([]string, len(s.Children))
	for i, c := range s.Children {
		parts[i] = c.Canonical()
	}
	name := "seq"
	if s.Op == Par {
		name = "par"
	}
	return name + "(" + strings.Join(parts, ",") + ")"
}

// Parse parses and validates a steps string.
func Parse(text string) (Step, error) {
	if len(text) > MaxInputLen {
		return Step{}, &Error{fmt.Sprintf("input longer than %d bytes", MaxInputLen), MaxInputLen}
	}
	p := &parser{s: text}
	p.skipWS()
	if p.atEnd() {
		return Step{}, p.err("empty workload: expected a step such as 'sleep:100'")
	}
	items, err := p.list(0)
	if err != nil {
		return Step{}, err
	}
	p.skipWS()
	if !p.atEnd() {
		if p.s[p.pos] == ')' {
			return Step{}, p.err("unexpected ')'")
		}
		return Step{}, p.err(fmt.Sprintf("unexpected '%s'", p.peekChar()))
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return Step{Op: Seq, Children: items}, nil
}

type parser struct {
	s      string
	pos    int
	leaves int
}

func (p *parser) err(msg string) error { return &Error{msg, p.pos} }
func (p *parser) atEnd() bool          { return p.pos >= len(p.s) }

func (p *parser) peek() int {
	if p.atEnd() {
		return -1
	}
	return int(p.s[p.pos])
}

func (p *parser) peekChar() string {
	r, size := utf8.DecodeRuneInString(p.s[p.pos:])
	if r == utf8.RuneError && size <= 1 {
		return "?"
	}
	return string(r)
}

func (p *parser) skipWS() {
	for p.peek() == ' ' || p.peek() == '\t' {
		p.pos++
	}
}

func (p *parser) run(accept func(byte) bool) string {
	start := p.pos
	for !p.atEnd() && accept(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isKey(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == ':'
}

func (p *parser) list(depth int) ([]Step, error) {
	var items []Step
	for {
		it, err := p.item(depth)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		p.skipWS()
		if p.peek() != ',' {
			return items, nil
		}
		p.pos++
		p.skipWS()
	}
}

func (p *parser) item(depth int) (Step, error) {
	p.skipWS()
	start := p.pos
	word := p.run(isLetter)
	switch word {
	case "seq", "par":
		return p.group(word, depth)
	case "cpu", "sleep", "http", "pg", "mc":
		if p.peek() != ':' {
			return Step{}, p.err(fmt.Sprintf("expected ':' after '%s'", word))
		}
		p.pos++
		p.leaves++
		if p.leaves > MaxLeaves {
			p.pos = start
			return Step{}, p.err(fmt.Sprintf("more than %d steps", MaxLeaves))
		}
		switch word {
		case "cpu":
			n, err := p.whole()
			return Step{Op: CPU, Terms: n}, err
		case "mc":
			k, err := p.key()
			return Step{Op: IO, Kind: "mc", Key: k}, err
		}
		us, err := p.millis()
		return Step{Op: IO, Kind: word, Micros: us}, err
	case "":
		if p.atEnd() {
			return Step{}, p.err("expected a step")
		}
		return Step{}, p.err(fmt.Sprintf("expected a step, found '%s'", p.peekChar()))
	}
	p.pos = start
	return Step{}, p.err(fmt.Sprintf("unknown step '%s' (expected %s)", word, stepWords()))
}

// stepWords lists every word that starts a step, as the unknown-step message
// does: cpu, the backend kinds (Kinds), seq or par.
func stepWords() string {
	words := append(append([]string{"cpu"}, Kinds...), "seq")
	return strings.Join(words, ", ") + " or par"
}

func (p *parser) group(word string, depth int) (Step, error) {
	if p.peek() != '(' {
		return Step{}, p.err(fmt.Sprintf("expected '(' after '%s'", word))
	}
	if depth+1 > MaxDepth {
		return Step{}, p.err(fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
	}
	p.pos++
	p.skipWS()
	if p.peek() == ')' {
		return Step{}, p.err(fmt.Sprintf("'%s(...)' needs at least one step", word))
	}
	children, err := p.list(depth + 1)
	if err != nil {
		return Step{}, err
	}
	p.skipWS()
	if p.peek() != ')' {
		return Step{}, p.err("expected ')'")
	}
	p.pos++
	op := Seq
	if word == "par" {
		op = Par
	}
	return Step{Op: op, Children: children}, nil
}

func (p *parser) whole() (uint64, error) {
	start := p.pos
	d := p.run(isDigit)
	if d == "" {
		return 0, p.err("expected a whole number of terms")
	}
	n, err := strconv.ParseUint(d, 10, 64)
	if err != nil || n > MaxCPUTerms {
		p.pos = start
		return 0, p.err(fmt.Sprintf("cpu terms above the limit of %d", uint64(MaxCPUTerms)))
	}
	return n, nil
}

func (p *parser) millis() (int64, error) {
	start := p.pos
	whole := p.run(isDigit)
	text := whole
	if p.peek() == '.' {
		p.pos++
		frac := p.run(isDigit)
		if frac == "" {
			return 0, p.err("expected digits after '.'")
		}
		text = whole + "." + frac
	}
	if whole == "" {
		p.pos = start
		return 0, p.err("expected milliseconds, e.g. 200 or 0.5")
	}
	ms, err := strconv.ParseFloat(text, 64)
	if err != nil || ms > MaxMs {
		p.pos = start
		return 0, p.err(fmt.Sprintf("%s ms is above the limit of %d ms", text, int64(MaxMs)))
	}
	// Rust's f64::round: halves away from zero.
	return int64(math.Round(ms * 1000.0)), nil
}

func (p *parser) key() (string, error) {
	start := p.pos
	k := p.run(isKey)
	if k == "" {
		return "", p.err("expected a memcached key")
	}
	if len(k) > MaxKeyLen {
		p.pos = start
		return "", p.err(fmt.Sprintf("memcached key longer than %d bytes", MaxKeyLen))
	}
	return k, nil
}
