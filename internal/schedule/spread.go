// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// fieldRanges are the values an H may pick in each of the five fields. The
// day of the month stops at 28, as Jenkins' does, so that a spread task
// fires in every month.
var fieldRanges = [5]struct {
	name   string
	lo, hi int
}{
	{"minute", 0, 59},
	{"hour", 0, 23},
	{"day of month", 1, 28},
	{"month", 1, 12},
	{"day of week", 0, 6},
}

// HasSpread reports whether expr uses H in one of its fields.
func HasSpread(expr string) bool {
	for f := range strings.FieldsSeq(expr) {
		for item := range strings.SplitSeq(f, ",") {
			if strings.HasPrefix(item, "H") {
				return true
			}
		}
	}
	return false
}

// Spread replaces each H of a five-field expression with a value picked
// from a stable hash of key (the task's namespace and name), so that many
// tasks written "H 2 * * *" fire at different minutes of the hour, and each
// always at the same one. Jenkins' forms are accepted in every field:
//
//	H          a value in the field's whole range
//	H(a-b)     a value from a to b
//	H/n        every n, from an offset below n
//	H(a-b)/n   every n from a to b, from an offset below n
//
// An expression without H comes back unchanged; the result is checked with
// Check by the caller like any other expression. Each field (and each item
// of a list) gets its own pick, so "H H * * *" is not "5 5 * * *" for all.
func Spread(expr, key string) (string, error) {
	if !HasSpread(expr) {
		return expr, nil
	}
	fields := strings.Fields(expr)
	if len(fields) != len(fieldRanges) {
		return "", fmt.Errorf("invalid cron expression %q: H needs the five-field form (minute hour day-of-month month day-of-week)", expr)
	}
	for i, f := range fields {
		items := strings.Split(f, ",")
		for j, item := range items {
			if !strings.HasPrefix(item, "H") {
				continue
			}
			v, err := spreadItem(item, i, pick(key, i, j))
			if err != nil {
				return "", fmt.Errorf("invalid cron expression %q: %s field %q: %w", expr, fieldRanges[i].name, item, err)
			}
			items[j] = v
		}
		fields[i] = strings.Join(items, ",")
	}
	return strings.Join(fields, " "), nil
}

// pick is the hash Spread draws from for item j of field i.
func pick(key string, i, j int) uint64 {
	sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(i) + "\x00" + strconv.Itoa(j)))
	return binary.BigEndian.Uint64(sum[:8])
}

// spreadItem resolves one H item of field i with the hash h.
func spreadItem(item string, i int, h uint64) (string, error) {
	lo, hi := fieldRanges[i].lo, fieldRanges[i].hi
	rest := item[1:]
	if strings.HasPrefix(rest, "(") {
		end := strings.Index(rest, ")")
		if end < 0 {
			return "", errors.New("the range after H( has no closing parenthesis")
		}
		a, b, ok := strings.Cut(rest[1:end], "-")
		if !ok {
			return "", errors.New("the parentheses after H take a range such as H(0-29)")
		}
		from, err1 := strconv.Atoi(a)
		to, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || from > to || from < lo || to > hi {
			return "", fmt.Errorf("H(%s) must be a range of numbers from %d to %d, the lower first", rest[1:end], lo, hi)
		}
		lo, hi, rest = from, to, rest[end+1:]
	}
	if rest == "" {
		return strconv.Itoa(lo + int(h%uint64(hi-lo+1))), nil
	}
	step, ok := strings.CutPrefix(rest, "/")
	if !ok {
		return "", errors.New("only a range in parentheses and a step may follow H, as in H(0-29)/10")
	}
	n, err := strconv.Atoi(step)
	if err != nil || n < 1 {
		return "", errors.New("the step after / must be a positive number")
	}
	start := lo + int(h%uint64(min(n, hi-lo+1)))
	return fmt.Sprintf("%d-%d/%d", start, hi, n), nil
}

// Effective is the schedule a task's CronJob gets: its expression with every
// H resolved from the task's namespace and name.
func Effective(expr, namespace, name string) (string, error) {
	return Spread(expr, namespace+"/"+name)
}
