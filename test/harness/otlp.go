// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The platform-operator Authors.

package harness

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/example/platform-operator/internal/testutil/localwebhook"
)

// OTLPReceiver is an OTLP/gRPC trace receiver, what a collector or Jaeger
// listens with on port 4317, that keeps every span it is sent, so a test
// can assert on the traces the API server and the operator export. It
// speaks plain gRPC, as the API server's exporter does.
type OTLPReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	// Addr is where it listens, host:port on 127.0.0.1: the endpoint of an
	// API server's TracingConfiguration; the operator's
	// OTEL_EXPORTER_OTLP_ENDPOINT is Endpoint().
	Addr string

	server *grpc.Server
	mu     sync.Mutex
	spans  []Span
}

// Span is a received span, with its IDs in hex as traceparents write them.
type Span struct {
	// Service is the service.name of the resource that sent it
	// (kube-apiserver, platform-operator).
	Service string
	Name    string
	Kind    tracepb.Span_SpanKind
	// TraceID, SpanID and ParentSpanID ("" for a root) place the span.
	TraceID, SpanID, ParentSpanID string
	// Links are the spans it links to.
	Links []SpanRef
	// Attributes are its attributes, values as strings.
	Attributes map[string]string
}

// SpanRef names a span by its trace and span IDs, in hex.
type SpanRef struct {
	TraceID, SpanID string
}

// StartOTLPReceiver starts a receiver on a free port of 127.0.0.1.
func StartOTLPReceiver() (*OTLPReceiver, error) {
	l, err := net.Listen("tcp", localwebhook.Host+":0")
	if err != nil {
		return nil, fmt.Errorf("listen for OTLP: %w", err)
	}
	r := &OTLPReceiver{Addr: l.Addr().String(), server: grpc.NewServer()}
	coltracepb.RegisterTraceServiceServer(r.server, r)
	go func() { _ = r.server.Serve(l) }()
	return r, nil
}

// Endpoint is the receiver's address as an OTEL_EXPORTER_OTLP_ENDPOINT: the
// http scheme tells the SDK's exporter to connect without TLS.
func (r *OTLPReceiver) Endpoint() string {
	return "http://" + r.Addr
}

// Env is what a manager process needs in its environment to export its
// spans here at once: the endpoint, and a batch delay of a tenth of a
// second instead of five.
func (r *OTLPReceiver) Env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + r.Endpoint(), "OTEL_BSP_SCHEDULE_DELAY=100"}
}

// APIServerTracingArgs writes, in dir, a TracingConfiguration that sends
// every span of the API server here, and returns the `kwokctl create
// cluster` flags that give it to the cluster's kube-apiserver
// (--tracing-config-file; with the binary runtime the path is the host's).
func (r *OTLPReceiver) APIServerTracingArgs(dir string) ([]string, error) {
	path := filepath.Join(dir, "apiserver-tracing.yaml")
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
endpoint: %s
samplingRatePerMillion: 1000000
`, r.Addr)
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, err
	}
	return []string{"--extra-args=kube-apiserver=tracing-config-file=" + path}, nil
}

// Export keeps the spans of a request; it implements the OTLP trace service.
func (r *OTLPReceiver) Export(_ context.Context,
	req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				span := Span{Service: service, Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Attributes: attributes(s.GetAttributes())}
				for _, l := range s.GetLinks() {
					span.Links = append(span.Links,
						SpanRef{TraceID: hex.EncodeToString(l.GetTraceId()), SpanID: hex.EncodeToString(l.GetSpanId())})
				}
				got = append(got, span)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Spans returns every span received so far.
func (r *OTLPReceiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Stop stops the receiver.
func (r *OTLPReceiver) Stop() {
	r.server.Stop()
}

// attributes flattens OTLP attributes to strings.
func attributes(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.GetStringValue()
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = fmt.Sprint(v.GetBoolValue())
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}
