// SPDX-License-Identifier: Apache-2.0

package harness

import (
	"io"
	"net"
	"testing"
	"time"
)

// TestPipe_TellsARequestTheServerClosedOnUnanswered pipes a client to a
// server that answers the first request and closes on the second: the
// second is unanswered (what the API server reports as EOF); a
// connection the client closes after its answer is not.
func TestPipe_TellsARequestTheServerClosedOnUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name       string
		requests   int
		unanswered bool
	}{
		{name: "answered, then closed by the client", requests: 1},
		{name: "a second request the server closes on", requests: 2, unanswered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, ended := piped(t, nil, func(c net.Conn) {
				buf := make([]byte, 3)
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				_, _ = c.Write([]byte("ok\n"))
				if tc.requests > 1 {
					// Closes on the next request without answering it.
					_, _ = io.ReadFull(c, buf)
					return
				}
				_, _ = io.Copy(io.Discard, c)
			})
			buf := make([]byte, 3)
			for i := range tc.requests {
				if _, err := client.Write([]byte("go\n")); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					if _, err := io.ReadFull(client, buf); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tc.requests == 1 {
				_ = client.Close()
			}
			end := <-ended
			_ = client.Close()
			if end.unanswered != tc.unanswered || end.answered != 3 || end.sent != int64(3*tc.requests) {
				t.Fatalf("pipe ended %+v, want unanswered=%v, 3 bytes answered, %d sent", end, tc.unanswered, 3*tc.requests)
			}
		})
	}
}

func TestPipe_TimesEachAnswerFromItsRequest(t *testing.T) {
	answers := &answerTimes{}
	client, ended := piped(t, answers, func(c net.Conn) {
		buf := make([]byte, 3)
		for range 2 {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			_, _ = c.Write([]byte("ok\n"))
		}
	})
	buf := make([]byte, 3)
	for range 2 {
		// A request in two writes is one request.
		for _, part := range []string{"g", "o\n"} {
			if _, err := client.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := io.ReadFull(client, buf); err != nil {
			t.Fatal(err)
		}
	}
	_ = client.Close()
	<-ended
	if answers.Count != 2 || answers.Sum < 100*time.Millisecond || answers.Sum > 2*time.Second {
		t.Errorf("timed %d answers in %v, want 2 taking at least 50ms each", answers.Count, answers.Sum)
	}
}

// piped is a client connection through pipe (timing answers into answers
// when not nil) to a server that serves its one connection with serve, and
// how the pipe ended, once it has.
func piped(t *testing.T, answers *answerTimes, serve func(net.Conn)) (net.Conn, <-chan pipeEnd) {
	t.Helper()
	server, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	go func() {
		c, err := server.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Close() })
	ended := make(chan pipeEnd, 1)
	go func() {
		in, err := front.Accept()
		if err != nil {
			return
		}
		defer in.Close()
		out, err := net.Dial("tcp", server.Addr().String())
		if err != nil {
			return
		}
		ended <- pipe(in, out, answers)
	}()
	client, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return client, ended
}
