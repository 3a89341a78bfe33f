// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package schedule

import (
	"strings"
	"testing"
)

// The CronJob documentation's schedule language: five fields and seven
// macros (https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#schedule-syntax).
func TestCheck_AcceptsTheDocumentedLanguageOnly(t *testing.T) {
	for _, tt := range []struct {
		expr    string
		wantErr string // empty: accepted
	}{
		{"* * * * *", ""},
		{"*/5 9-17 * * MON-FRI", ""},
		{"0 0 13 * 5", ""},
		{"0 0 1 1 *", ""},
		{"0 12 * JAN-MAR,DEC SUN", ""},
		{"0 0 ? * *", ""},
		{"@yearly", ""},
		{"@annually", ""},
		{"@monthly", ""},
		{"@weekly", ""},
		{"@daily", ""},
		{"@midnight", ""},
		{"@hourly", ""},
		{"@every 1s", "@every is not part of the CronJob schedule language"},
		{"@every 1m", "@every is not part of the CronJob schedule language"},
		{"@every 24h", "@every is not part of the CronJob schedule language"},
		{"@every", "@every is not part of the CronJob schedule language"},
		{"@reboot", "unknown macro"},
		{"@fortnightly", "unknown macro"},
		{"@DAILY", "unknown macro"},
		{"* * * * * *", "expected exactly 5 fields"},    // seconds: fires every second
		{"*/10 * * * * *", "expected exactly 5 fields"}, // every ten seconds
		{"0 * * * *  *", "expected exactly 5 fields"},
		{"* * * *", "expected exactly 5 fields"},
		{"61 * * * *", "above maximum"},
		{"", "empty spec string"},
		{"TZ=UTC @every 1s", "fires more often than once a minute"},
	} {
		err := Check(tt.expr)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Check(%q) = %v, want it accepted", tt.expr, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("Check(%q) = %v, want an error containing %q", tt.expr, err, tt.wantErr)
		}
	}
}

// The CronJob API's own rules for spec.timeZone
// (k8s.io/kubernetes/pkg/apis/batch/validation, validateTimeZone).
func TestCheckZone_RefusesWhatTheCronJobAPIRefuses(t *testing.T) {
	for _, tt := range []struct {
		zone    string
		wantErr string
	}{
		{"UTC", ""},
		{"Europe/Berlin", ""},
		{"America/Argentina/Buenos_Aires", ""},
		{"Etc/GMT+2", ""},
		{"", "must not be empty"},
		{"Local", `refuses "Local"`},
		{"local", `refuses "Local"`},
		{"LOCAL", `refuses "Local"`},
		{"Mars/Olympus", "not a time zone"},
		{"../etc/passwd", "not a time zone"},
		{"Europe/../UTC", "not a time zone"},
		{"America/", "not a time zone"},
		{"-UTC", "not a time zone"},
		{"Europe/Berlin ", "not a time zone"},
		{"Abcdefghijklmno/Berlin", "not a time zone"}, // a part of 15 characters
	} {
		err := CheckZone(tt.zone)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckZone(%q) = %v, want it accepted", tt.zone, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("CheckZone(%q) = %v, want an error containing %q", tt.zone, err, tt.wantErr)
		}
	}
}
