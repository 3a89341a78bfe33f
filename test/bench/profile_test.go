// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package main

import (
	"bytes"
	"runtime"
	"runtime/pprof"
	"testing"
)

// keep holds what TestInUseBytes_CountsWhatALiveObjectHolds allocates, so
// that it is live at the second profile.
var keep []byte

func TestInUseBytes_CountsWhatALiveObjectHolds(t *testing.T) {
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	t.Cleanup(func() { runtime.MemProfileRate = rate })
	read := func() float64 {
		t.Helper()
		// A profile is as of the last completed collection; the second
		// one publishes what the first found.
		runtime.GC()
		runtime.GC()
		var buf bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		n, err := inUseBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := read()
	const size = 4 << 20
	keep = make([]byte, size)
	after := read()
	if grown := after - before; grown < size || grown > size+256<<10 {
		t.Errorf("in-use bytes grew by %.0f, want %d and a little", grown, size)
	}
	runtime.KeepAlive(keep)
}
