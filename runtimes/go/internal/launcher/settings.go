package launcher

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"iolab/runtimes/go/internal/models"
)

// Settings are the launcher's flags, validated (runtimes/README.md, "The launcher protocol").
type Settings struct {
	Model       string
	Port        int
	Knobs       map[string]int // every knob the model reads that has a value: defaults, then flags
	HTTP        string
	PG          string
	MC          string
	PGWait      time.Duration
	Warmup      int
	MetricsPort int // -1: no separate listener
}

// UsageError is a bad flag: one line on stderr, exit 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

const maxWarmup = 100_000

var valueFlags = []string{"model", "port", "http-backend", "pg", "mc", "pg-wait", "warmup", "metrics-port"}

func flagName(knob string) string { return strings.ReplaceAll(knob, "_", "-") }

func allFlags() []string {
	out := append([]string{}, valueFlags...)
	for _, k := range models.AllKnobs {
		out = append(out, flagName(k))
	}
	return out
}

// pairs reads --flag VALUE and --flag=VALUE, in order.
func pairs(argv []string) (map[string]string, error) {
	known := map[string]bool{}
	for _, f := range allFlags() {
		known[f] = true
	}
	given := map[string]string{}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if !strings.HasPrefix(arg, "--") {
			return nil, usagef("unexpected argument '%s' (flags look like --model virtual)", arg)
		}
		name, value, eq := strings.Cut(arg[2:], "=")
		if !known[name] {
			return nil, usagef("unknown flag '--%s' (expected one of: --%s)", name, strings.Join(allFlags(), ", --"))
		}
		if !eq {
			if i+1 >= len(argv) {
				return nil, usagef("--%s needs a value", name)
			}
			i++
			value = argv[i]
		}
		given[name] = value
	}
	return given, nil
}

func count(flag, text string, least, most int) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil || n < least || n > most || strings.ContainsAny(text, "+- ") {
		return 0, usagef("--%s must be a whole number from %d to %d, got '%s'", flag, least, most, text)
	}
	return n, nil
}

var millisRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ms|s)?$`)

// millis reads milliseconds (the protocol's MS), or a duration as `iolab serve` writes one.
func millis(flag, text string) (time.Duration, error) {
	m := millisRe.FindStringSubmatch(text)
	ms := 0.0
	if m != nil {
		ms, _ = strconv.ParseFloat(m[1], 64)
		if m[2] == "s" {
			ms *= 1000
		}
	}
	if m == nil || ms < 1 || ms > 3_600_000 {
		return 0, usagef("--%s must be milliseconds from 1 to 3600000 (or 500ms, 30s), got '%s'", flag, text)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

var httpRe = regexp.MustCompile(`^http://[^/:?#]+(:[0-9]{1,5})?/?$`)

// Parse validates the launcher's flags; backends default to IOLAB_HTTP_BACKEND, IOLAB_PG,
// IOLAB_MC, as `iolab serve` does.
func Parse(argv []string, getenv func(string) string) (*Settings, error) {
	given, err := pairs(argv)
	if err != nil {
		return nil, err
	}
	name, ok := given["model"]
	if !ok {
		return nil, usagef("--model is required (one of: %s)", strings.Join(models.Names(), ", "))
	}
	m, ok := models.Find(name)
	if !ok {
		return nil, usagef("unknown model '%s' for the go runtime (expected one of: %s)", name, strings.Join(models.Names(), ", "))
	}
	s := &Settings{Model: name, Knobs: m.Defaults(models.Cores()), PGWait: 30 * time.Second, MetricsPort: -1}
	for _, k := range models.AllKnobs {
		text, set := given[flagName(k)]
		if !set {
			continue
		}
		if !m.Reads(k) {
			hint := "no go model has it"
			if users := models.UsersOf(k); len(users) > 0 {
				hint = "it applies to: " + strings.Join(users, ", ")
			}
			if k == "offload" {
				hint = "Go has no event loop to offload from: every goroutine already waits off the scheduler's threads"
			}
			return nil, usagef("--%s does not apply to model '%s' (%s)", flagName(k), name, hint)
		}
		if s.Knobs[k], err = count(flagName(k), text, 1, 1_000_000); err != nil {
			return nil, err
		}
	}
	if v, ok := given["port"]; ok {
		if s.Port, err = count("port", v, 0, 65535); err != nil {
			return nil, err
		}
	}
	if v, ok := given["metrics-port"]; ok {
		if s.MetricsPort, err = count("metrics-port", v, 0, 65535); err != nil {
			return nil, err
		}
	}
	if v, ok := given["warmup"]; ok {
		if s.Warmup, err = count("warmup", v, 0, maxWarmup); err != nil {
			return nil, err
		}
	}
	if v, ok := given["pg-wait"]; ok {
		if s.PGWait, err = millis("pg-wait", v); err != nil {
			return nil, err
		}
	}
	pick := func(flag, env string) string {
		if v, ok := given[flag]; ok {
			return v
		}
		return getenv(env)
	}
	if s.HTTP = pick("http-backend", "IOLAB_HTTP_BACKEND"); s.HTTP != "" {
		if !httpRe.MatchString(s.HTTP) {
			return nil, usagef("--http-backend '%s' is not an http://HOST:PORT URL: use e.g. the URL `iolab backend http` prints", s.HTTP)
		}
		s.HTTP = strings.TrimRight(s.HTTP, "/")
	}
	if s.PG = pick("pg", "IOLAB_PG"); s.PG != "" {
		if u, err := url.Parse(s.PG); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			return nil, usagef("--pg '%s' is not a PostgreSQL URL: use postgres://USER@HOST:PORT/DB", s.PG)
		}
	}
	if s.MC = pick("mc", "IOLAB_MC"); s.MC != "" {
		i := strings.LastIndex(s.MC, ":")
		n, err := strconv.Atoi(s.MC[i+1:])
		if i < 1 || err != nil || n < 1 || n > 65535 {
			return nil, usagef("--mc '%s' is not HOST:PORT: use e.g. 127.0.0.1:11211", s.MC)
		}
	}
	return s, nil
}

// childEnv carries the settings to prefork's processes.
const childEnv = "IOLAB_GO_CHILD"

func (s *Settings) encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

func decodeChild() (*Settings, error) {
	var s Settings
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &s); err != nil {
		return nil, fmt.Errorf("%s: %w", childEnv, err)
	}
	return &s, nil
}
