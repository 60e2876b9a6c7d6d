package grpc_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	gogrpc "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/a2abridge/a2abridge/a2a"
	"github.com/a2abridge/a2abridge/binding"
	"github.com/a2abridge/a2abridge/internal/binding/edge"
	a2agrpc "github.com/a2abridge/a2abridge/internal/binding/grpc"
	"github.com/a2abridge/a2abridge/internal/extension"
	"github.com/a2abridge/a2abridge/internal/wire/pb"
)

// pushStub answers the push config methods with what it was asked and
// applies every extension activated.
type pushStub struct {
	binding.Handler
}

func (pushStub) CreateTaskPushNotificationConfig(ctx context.Context, c a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	for _, u := range extension.From(ctx).Requested() {
		extension.From(ctx).Apply(u)
	}
	c.PushNotificationConfig.ID = "p1"
	return &c, nil
}

func (pushStub) ListTaskPushNotificationConfigs(_ context.Context, p a2a.ListTaskPushNotificationConfigsRequest) ([]a2a.TaskPushNotificationConfig, error) {
	return []a2a.TaskPushNotificationConfig{{Tenant: p.Tenant, TaskID: p.TaskID,
		PushNotificationConfig: a2a.PushNotificationConfig{ID: "p1", URL: "https://example.com/hook"}}}, nil
}

// The agent is chosen by the tenant's first segment and sees the rest;
// results carry the tenant as sent; activated extensions are read from
// metadata and the applied ones listed in the header.
func TestTenantsAndExtensions(t *testing.T) {
	var seen []string
	conn := serveTargets(t, func(r *a2agrpc.Request) (a2agrpc.Target, error) {
		agent, inner, _ := strings.Cut(r.Tenant, "/")
		seen = append(seen, r.Method+" "+agent+" "+inner+" "+r.HTTP().Header.Get("X-Caller")+" "+r.HTTP().Host)
		return a2agrpc.Target{Agent: &edge.Agent{Handler: pushStub{}, Name: agent}, Tenant: inner}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "a2a-extensions", "https://ex.example/a, https://ex.example/b", "x-caller", "alice")
	req, _ := pb.AppendTaskPushNotificationConfig(nil, &a2a.TaskPushNotificationConfig{Tenant: "echo/acme", TaskID: "t1",
		PushNotificationConfig: a2a.PushNotificationConfig{URL: "https://example.com/hook"}})
	var out a2agrpc.Frame
	var header metadata.MD
	err := conn.Invoke(ctx, "/"+a2agrpc.ServiceName+"/CreateTaskPushNotificationConfig", &a2agrpc.Frame{B: req}, &out, gogrpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	c, err := pb.UnmarshalTaskPushNotificationConfig(out.B)
	if err != nil || c.Tenant != "echo/acme" || c.PushNotificationConfig.ID != "p1" {
		t.Fatalf("%+v %v", c, err)
	}
	if got := header.Get("a2a-extensions"); len(got) != 1 || got[0] != "https://ex.example/a,https://ex.example/b" {
		t.Fatalf("applied extensions %q", got)
	}
	list, _ := pb.AppendListTaskPushNotificationConfigsRequest(nil, &a2a.ListTaskPushNotificationConfigsRequest{Tenant: "echo/acme", TaskID: "t1"})
	b, err := invoke(ctx, conn, "ListTaskPushNotificationConfigs", list)
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := pb.UnmarshalListTaskPushNotificationConfigsResponse(b)
	if err != nil || len(cs) != 1 || cs[0].Tenant != "echo/acme" {
		t.Fatalf("%+v %v", cs, err)
	}
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "CreateTaskPushNotificationConfig echo acme alice 127.0.0.1:") {
		t.Fatalf("resolver saw %q", seen)
	}

	// More extension URIs than a request may list: INVALID_ARGUMENT.
	many := strings.Repeat("https://ex.example/x,", extension.MaxURIs) + "https://ex.example/last"
	_, err = invoke(metadata.AppendToOutgoingContext(context.Background(), "a2a-extensions", many), conn, "ListTaskPushNotificationConfigs", list)
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("too many extensions: %v", err)
	}
}

// What a resolver refuses: an unknown agent, missing credentials (with
// their challenges in the trailer), an identity provider down.
func TestRefusals(t *testing.T) {
	conn := serveTargets(t, func(r *a2agrpc.Request) (a2agrpc.Target, error) {
		switch r.Tenant {
		case "nobody":
			return a2agrpc.Target{}, a2agrpc.NotFound(`no agent named "nobody"`)
		case "locked":
			return a2agrpc.Target{}, a2agrpc.Unauthenticated(a2a.ErrUnauthenticated, []string{`Bearer realm="a2a"`, `ApiKey header="X-API-Key"`})
		}
		return a2agrpc.Target{}, a2agrpc.Unavailable("identity provider unreachable")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		tenant string
		code   codes.Code
	}{{"nobody", codes.NotFound}, {"locked", codes.Unauthenticated}, {"down", codes.Unavailable}} {
		req, _ := pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{Tenant: c.tenant, ID: "t1"})
		var trailer metadata.MD
		var out a2agrpc.Frame
		err := conn.Invoke(ctx, "/"+a2agrpc.ServiceName+"/GetTask", &a2agrpc.Frame{B: req}, &out, gogrpc.Trailer(&trailer))
		if status.Code(err) != c.code {
			t.Errorf("%s: %v, want %s", c.tenant, err, c.code)
		}
		if c.code == codes.Unauthenticated && len(trailer.Get("www-authenticate")) != 2 {
			t.Errorf("challenges %q", trailer.Get("www-authenticate"))
		}
	}
}

// One port serves HTTP/1.1 and cleartext gRPC: Split sorts connections
// by their first bytes, and a client that sends nothing holds up no
// other.
func TestSplit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h2c, rest := a2agrpc.Split(ln, 5*time.Second)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "http/1.1 here") })}
	go func() { _ = hs.Serve(rest) }()
	defer hs.Close()
	gs := a2agrpc.NewServer(a2agrpc.Options{Resolve: func(r *a2agrpc.Request) (a2agrpc.Target, error) {
		return a2agrpc.Target{Agent: &edge.Agent{Handler: &stub{}, Name: "stub"}}, nil
	}})
	go func() { _ = gs.Serve(h2c) }()
	defer gs.Stop()

	idle, err := net.Dial("tcp", ln.Addr().String()) // sends nothing
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	half, err := net.Dial("tcp", ln.Addr().String()) // sends a part of the preface
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	_, _ = half.Write([]byte("PRI * HT"))

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "http/1.1 here" {
		t.Fatalf("HTTP/1.1: %q", body)
	}
	conn := dial(t, ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	get, _ := pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{ID: "t9"})
	if _, err := invoke(ctx, conn, "GetTask", get); status.Code(err) != codes.NotFound {
		t.Fatalf("gRPC on the same port: %v", err)
	}

	// Closing one half leaves the other serving; closing both closes ln.
	hs.Close()
	if _, err := invoke(ctx, conn, "GetTask", get); status.Code(err) != codes.NotFound {
		t.Fatalf("gRPC after the HTTP server closed: %v", err)
	}
	gs.Stop()
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Fatal("the listener is still open after both halves closed")
	}
}

// The health service says SERVING for the A2A service and the server as
// a whole; reflection lists the services and describes A2AService from
// the proto's own descriptors.
func TestHealthAndReflection(t *testing.T) {
	conn := serve(t, func(string) (binding.Handler, error) { return &stub{}, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, svc := range []string{"", a2agrpc.ServiceName} {
		res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || res.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q: %v %v", svc, res, err)
		}
	}
	rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.CloseSend()
	ask := func(req *reflectionpb.ServerReflectionRequest) *reflectionpb.ServerReflectionResponse {
		t.Helper()
		if err := rc.Send(req); err != nil {
			t.Fatal(err)
		}
		res, err := rc.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	var names []string
	for _, s := range res.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	if !strings.Contains(strings.Join(names, " "), a2agrpc.ServiceName) || !strings.Contains(strings.Join(names, " "), "grpc.health.v1.Health") {
		t.Fatalf("services %q", names)
	}
	res = ask(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: a2agrpc.ServiceName}})
	files := res.GetFileDescriptorResponse().GetFileDescriptorProto()
	if len(files) == 0 {
		t.Fatalf("no file for %s: %v", a2agrpc.ServiceName, res)
	}
	var fd descriptorpb.FileDescriptorProto
	if err := proto.Unmarshal(files[0], &fd); err != nil {
		t.Fatal(err)
	}
	if fd.GetPackage() != "lf.a2a.v1" || len(fd.GetService()) != 1 || len(fd.GetService()[0].GetMethod()) != 11 {
		t.Fatalf("descriptor of %s: package %q, services %d", a2agrpc.ServiceName, fd.GetPackage(), len(fd.GetService()))
	}
}

// panicky panics in GetTask.
type panicky struct{ binding.Handler }

func (panicky) GetTask(context.Context, a2a.GetTaskRequest) (*a2a.Task, error) { panic("boom") }

// A panic answers its call with INTERNAL and leaves the server serving;
// metadata larger than net/http takes in headers is refused; A2A-Version
// is read as over HTTP.
func TestPanicsMetadataVersions(t *testing.T) {
	conn := serve(t, func(string) (binding.Handler, error) { return panicky{&stub{}}, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	get, _ := pb.AppendGetTaskRequest(nil, &a2a.GetTaskRequest{ID: "t1"})
	for i := 0; i < 2; i++ {
		if _, err := invoke(ctx, conn, "GetTask", get); status.Code(err) != codes.Internal {
			t.Fatalf("a panic: %v", err)
		}
	}
	big := metadata.AppendToOutgoingContext(ctx, "x-big", strings.Repeat("x", 2<<20))
	// The server's limit, advertised in its HTTP/2 settings: grpc-go's
	// client refuses to send more.
	if _, err := invoke(big, conn, "GetTask", get); err == nil || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("2 MiB of metadata: %v", err)
	}
	del, _ := pb.AppendPushConfigIDRequest(nil, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"})
	for v, ok := range map[string]bool{" 1.0 ": true, "1.0.1": true, "1": false, "1.5garbage": false, "1.1": false, "0.3": false} {
		_, err := invoke(metadata.AppendToOutgoingContext(ctx, "a2a-version", v), conn, "DeleteTaskPushNotificationConfig", del)
		if (err == nil) != ok {
			t.Errorf("A2A-Version %q: %v", v, err)
		}
	}
}
