package steps

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// vectors/steps.json: every input's canonical form and leaf count, or its exact error.
func TestStepsVectors(t *testing.T) {
	raw, err := os.ReadFile("../../../../vectors/steps.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Input     string `json:"input"`
			Canonical string `json:"canonical"`
			Leaves    int    `json:"leaves"`
			Error     string `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 20 {
		t.Fatalf("only %d cases in vectors/steps.json", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		s, err := Parse(c.Input)
		if c.Error != "" {
			if err == nil || err.Error() != c.Error {
				t.Errorf("%q: got %v, want error %q", c.Input, err, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.Input, err)
			continue
		}
		if s.Canonical() != c.Canonical || s.Leaves() != c.Leaves {
			t.Errorf("%q: got %q (%d leaves), want %q (%d)", c.Input, s.Canonical(), s.Leaves(), c.Canonical, c.Leaves)
		}
	}
}

func TestLimitsBeyondTheVectors(t *testing.T) {
	many := strings.Repeat("sleep:1,", MaxLeaves) + "sleep:1"
	if _, err := Parse(many); err == nil || !strings.Contains(err.Error(), "more than 1000 steps") {
		t.Errorf("1001 leaves: %v", err)
	}
	if _, err := Parse("mc:" + strings.Repeat("k", 251)); err == nil || !strings.Contains(err.Error(), "longer than 250") {
		t.Errorf("long key: %v", err)
	}
	if _, err := Parse("sleep:1,é"); err == nil || err.Error() != "steps: expected a step, found 'é' at 8" {
		t.Errorf("non-ASCII: %v", err)
	}
	s, _ := Parse("seq(mc:a,par(pg:1,cpu:2))")
	if !s.Uses("pg") || !s.Uses("mc") || s.Uses("http") {
		t.Errorf("Uses: %+v", s)
	}
}
