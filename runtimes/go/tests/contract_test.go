package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type expectation struct {
	Status       int            `json:"status"`
	ContentType  string         `json:"content_type"`
	Body         map[string]any `json:"body"`
	BodyContains []string       `json:"body_contains"`
	MinMs        *float64       `json:"min_ms"`
	MaxMs        *float64       `json:"max_ms"`
}

type contractCase struct {
	Name         string       `json:"name"`
	Path         string       `json:"path"`
	Needs        string       `json:"needs"`
	Expect       *expectation `json:"expect"`
	Unconfigured *expectation `json:"unconfigured"`
}

func contractCases(t *testing.T) []contractCase {
	raw, err := os.ReadFile(filepath.Join(repo, "vectors", "contract.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []contractCase }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 15 {
		t.Fatalf("only %d cases", len(doc.Cases))
	}
	return doc.Cases
}

// judge an answer as `iolab verify` does; "" when it passes.
func judge(t *testing.T, e *expectation, a answer, model string) string {
	if a.Status != e.Status {
		return fmt.Sprintf("status %d, want %d: %.200s", a.Status, e.Status, a.Body)
	}
	if e.ContentType != "" && !strings.HasPrefix(a.Header.Get("Content-Type"), e.ContentType) {
		return fmt.Sprintf("content type %q, want %q", a.Header.Get("Content-Type"), e.ContentType)
	}
	if len(e.Body) > 0 {
		got := a.JSON(t)
		for k, want := range e.Body {
			if want == "$model" {
				want = model
			}
			if fmt.Sprint(got[k]) != fmt.Sprint(want) {
				return fmt.Sprintf("body.%s = %v, want %v: %s", k, got[k], want, a.Body)
			}
		}
	}
	for _, needle := range e.BodyContains {
		if !strings.Contains(string(a.Body), needle) {
			return fmt.Sprintf("body lacks %q: %.200s", needle, a.Body)
		}
	}
	if e.MinMs != nil && a.Ms < *e.MinMs {
		return fmt.Sprintf("%.1f ms, under %.0f: the step was not run", a.Ms, *e.MinMs)
	}
	if e.MaxMs != nil && a.Ms > *e.MaxMs {
		return fmt.Sprintf("%.1f ms, over %.0f", a.Ms, *e.MaxMs)
	}
	return ""
}

// vectors/contract.json against every model of runtime.toml: with the real backends (a case
// that needs one expects its `expect` answer) and without any (its `unconfigured` answer).
func TestContractVectors(t *testing.T) {
	cases := contractCases(t)
	for _, model := range manifestModels(t) {
		for _, configured := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/backends=%v", model, configured), func(t *testing.T) {
				if configured {
					backends(t, "IOLAB_HTTP_BACKEND", "IOLAB_PG", "IOLAB_MC")
				}
				args := []string{"--model", model}
				if model == "prefork" {
					args = append(args, "--processes", "2")
				}
				tg := start(t, configured, args...)
				for _, c := range cases {
					a := get(t, tg.URL+c.Path)
					e := c.Expect
					switch {
					case c.Needs != "" && !configured:
						e = c.Unconfigured
					case c.Needs != "" && e == nil:
						// Configured, nothing fixed to expect (a key that may be absent).
						ok, _ := a.JSON(t)["ok"].(bool)
						if !(a.Status == 200 && ok) && !(a.Status >= 400 && !ok) {
							t.Errorf("%s: %d %s", c.Name, a.Status, a.Body)
						}
						continue
					}
					if why := judge(t, e, a, model); why != "" {
						t.Errorf("case %s: %s", c.Name, why)
					}
				}
				if code := tg.stop(); code != 0 {
					t.Errorf("exit code %d after SIGTERM; stderr:\n%s", code, tg.stderr)
				}
			})
		}
	}
}
