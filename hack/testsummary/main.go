// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

// Command testsummary prints the end of a `make test` (or .ci/run) log that
// someone who reads only its last lines needs: each layer's time and
// result, and for a failed layer its failed tests, each with the last lines
// it printed, or the package's own last lines when go test itself failed
// (a build error, a panic, a timeout).
//
//	go run ./hack/testsummary -dir bin/test-reports
//
// hack/test-layer.sh writes what it reads: layers.tsv (a line per layer:
// name, seconds, exit code) and NAME.json (the layer's go test events, from
// gotestsum --jsonfile).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Limits that keep the summary within about 60 lines.
const (
	maxFailures  = 6
	linesPerTest = 8
	lineWidth    = 220
)

// layer is one line of layers.tsv.
type layer struct {
	name    string
	seconds int
	code    int
}

// event is the part of a test2json event the summary reads.
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

// failure is a failed test, or a package whose go test failed outside any
// test, with the last lines it printed.
type failure struct {
	pkg, test string
	elapsed   float64
	lines     []string
}

func main() {
	dir := flag.String("dir", "bin/test-reports", "the folder hack/test-layer.sh wrote its reports to")
	total := flag.Int("total", -1, "the whole run's seconds, printed when set")
	flag.Parse()
	if err := run(os.Stdout, *dir, *total); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dir string, total int) error {
	layers, err := readLayers(filepath.Join(dir, "layers.tsv"))
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "=== summary: each layer's time and result")
	failed := 0
	for _, l := range layers {
		result := "ok"
		if l.code != 0 {
			result = fmt.Sprintf("FAILED (exit %d)", l.code)
			failed++
		}
		fmt.Fprintf(w, "  %-14s %5d s  %s\n", l.name, l.seconds, result)
	}
	if total >= 0 {
		fmt.Fprintf(w, "  %-14s %5d s\n", "total", total)
	}
	for _, l := range layers {
		if l.code == 0 {
			continue
		}
		fails, err := readFailures(filepath.Join(dir, l.name+".json"))
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(w, "=== %s failed outside go test (no test events); its own output is above\n", l.name)
			continue
		case err != nil:
			return err
		}
		fmt.Fprintf(w, "=== %s: %d failed\n", l.name, len(fails))
		for i, f := range fails {
			if i == maxFailures {
				fmt.Fprintf(w, "  ... and %d more\n", len(fails)-maxFailures)
				break
			}
			name := f.pkg
			if f.test != "" {
				name += "." + f.test
			}
			fmt.Fprintf(w, "  FAIL %s (%.1f s)\n", name, f.elapsed)
			for _, line := range f.lines {
				fmt.Fprintf(w, "      %s\n", line)
			}
		}
	}
	if failed == 0 && len(layers) > 0 {
		fmt.Fprintln(w, "=== every layer passed")
	}
	return nil
}

func readLayers(path string) ([]layer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []layer
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Split(s.Text(), "\t")
		if len(fields) != 3 {
			continue
		}
		secs, err1 := strconv.Atoi(fields[1])
		code, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, layer{name: fields[0], seconds: secs, code: code})
	}
	return out, s.Err()
}

// readFailures returns the failed tests of a go test event stream, leaves
// only (a parent that failed because a subtest did is left out), then the
// packages that failed outside any test.
func readFailures(path string) ([]failure, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	output := map[string][]string{}
	var fails []failure
	key := func(pkg, test string) string { return pkg + "\x00" + test }
	dec := json.NewDecoder(f)
	for {
		var e event
		if err := dec.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			// A layer killed midway leaves a truncated last event.
			break
		}
		pkg := e.Package
		if pkg == "" {
			pkg = e.ImportPath
		}
		k := key(pkg, e.Test)
		switch e.Action {
		case "output", "build-output":
			output[k] = appendLine(output[k], e.Output)
		case "fail", "build-fail":
			fails = append(fails, failure{pkg: pkg, test: e.Test, elapsed: e.Elapsed})
		}
	}
	out := make([]failure, 0, len(fails))
	testFailed := map[string]bool{}
	for _, fl := range fails {
		if fl.test != "" {
			testFailed[fl.pkg] = true
		}
	}
	for _, fl := range fails {
		if fl.test != "" && hasFailedChild(fails, fl) {
			continue
		}
		// A package that failed because its tests did says nothing more.
		if fl.test == "" && testFailed[fl.pkg] {
			continue
		}
		fl.lines = why(output[key(fl.pkg, fl.test)], linesPerTest)
		out = append(out, fl)
	}
	// Tests first, then packages that failed outside them.
	slices.SortStableFunc(out, func(a, b failure) int {
		switch {
		case a.test != "" && b.test == "":
			return -1
		case a.test == "" && b.test != "":
			return 1
		}
		return 0
	})
	return out, nil
}

func hasFailedChild(fails []failure, parent failure) bool {
	for _, f := range fails {
		if f.pkg == parent.pkg && strings.HasPrefix(f.test, parent.test+"/") {
			return true
		}
	}
	return false
}

// appendLine keeps what a test printed, without go test's own progress
// lines, which say nothing of why it failed.
func appendLine(lines []string, out string) []string {
	line := strings.TrimRight(out, "\n")
	trimmed := strings.TrimSpace(line)
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- FAIL", "--- PASS", "--- SKIP"} {
		if strings.HasPrefix(trimmed, p) {
			return lines
		}
	}
	if trimmed == "" || trimmed == "FAIL" || trimmed == "PASS" {
		return lines
	}
	if len(line) > lineWidth {
		line = line[:lineWidth] + " …"
	}
	return append(lines, line)
}

// why returns at most n lines of a failed test's output: from the first
// panic, else from the last line that names a place in a Go file
// (t.Error's "x_test.go:363: "), where the failure is told, else the
// last n.
func why(lines []string, n int) []string {
	// A panic (a test timeout's among them) names the running tests
	// right after its first line; the goroutine dumps after that do not.
	for i, line := range lines {
		if strings.HasPrefix(line, "panic: ") {
			return lines[i:min(i+n, len(lines))]
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if goFileLine.MatchString(lines[i]) {
			end := min(i+n, len(lines))
			return lines[i:end]
		}
	}
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// goFileLine matches the place testing prints before a failure's message.
var goFileLine = regexp.MustCompile(`^\s*[\w./-]+\.go:\d+: `)
