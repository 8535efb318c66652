package models

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// iolab's own knob defaults (crates/model/src/knob.rs), which apply where runtime.toml gives none.
func iolabDefault(knob string, cores int) (int, bool) {
	switch knob {
	case "threads":
		return 200, true
	case "backlog":
		return 100, true
	case "workers", "processes":
		return cores, true
	case "mc_pool":
		return 1, true
	case "pg_pool":
		return 10, true
	}
	return 0, false // max_connections (8,192) and max_threads: Go's models have no such default
}

// eval understands the few manifest expressions this runtime uses.
func eval(t *testing.T, expr string, cores int) int {
	expr = strings.Trim(strings.TrimSpace(expr), `"`)
	if n, err := strconv.Atoi(expr); err == nil {
		return n
	}
	switch expr {
	case "cores":
		return cores
	case "max(4, cores)":
		return max(4, cores)
	}
	t.Fatalf("expression %q: teach this test", expr)
	return 0
}

// runtime.toml says what the launcher does: the same models, the same knobs, the same defaults.
func TestManifestAgrees(t *testing.T) {
	raw, err := os.ReadFile("../../runtime.toml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, section := range strings.Split(string(raw), "\n[")[1:] {
		head, body, _ := strings.Cut(section, "\n")
		name, ok := strings.CutPrefix(strings.TrimSuffix(head, "]"), "models.")
		if !ok {
			continue
		}
		names = append(names, name)
		m, ok := Find(name)
		if !ok {
			t.Errorf("runtime.toml has model %s, the launcher does not", name)
			continue
		}
		knobs := regexp.MustCompile(`knobs = \[(.*)\]`).FindStringSubmatch(body)
		var listed []string
		for _, k := range strings.Split(knobs[1], ",") {
			listed = append(listed, strings.Trim(strings.TrimSpace(k), `"`))
		}
		if !slices.Equal(listed, m.Knobs) {
			t.Errorf("%s: runtime.toml knobs %v, launcher %v", name, listed, m.Knobs)
		}
		manifest := map[string]string{}
		if d := regexp.MustCompile(`defaults = \{(.*)\}`).FindStringSubmatch(body); d != nil {
			for _, kv := range regexp.MustCompile(`(\w+) = ("[^"]*"|\d+)`).FindAllStringSubmatch(d[1], -1) {
				manifest[kv[1]] = kv[2]
			}
		}
		for _, cores := range []int{1, 2, 8, 64} {
			got := m.Defaults(cores)
			for _, k := range m.Knobs {
				want, has := 0, false
				if e, ok := manifest[k]; ok {
					want, has = eval(t, e, cores), true
				} else {
					want, has = iolabDefault(k, cores)
				}
				v, ok := got[k]
				if ok != has || v != want {
					t.Errorf("%s on %d cores: %s is %d (set %v) in the launcher, %d (set %v) by runtime.toml", name, cores, k, v, ok, want, has)
				}
			}
		}
	}
	if !slices.Equal(names, Names()) {
		t.Errorf("runtime.toml models %v, launcher %v", names, Names())
	}
}
