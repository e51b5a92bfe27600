package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
	"github.com/xbench/xbench/harness/result"
)

// Handshake is checked by both sides before anything else. Its version is
// the backend protocol's (backend.ProtocolVersion): bump that when the proto
// changes incompatibly.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  backend.ProtocolVersion,
	MagicCookieKey:   "XBENCH_PLUGIN",
	MagicCookieValue: "xbench-backend",
}

// PluginName is the key under which the backend is dispensed.
const PluginName = "backend"

// GRPCBackendPlugin adapts backend.Backend to go-plugin's gRPC transport.
type GRPCBackendPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl backend.Backend // set on the plugin side only
}

var _ goplugin.GRPCPlugin = (*GRPCBackendPlugin)(nil)

// GRPCServer registers the backend on the plugin side.
func (p *GRPCBackendPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterBackendServer(s, &grpcServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a backend.Backend that forwards over the connection.
func (p *GRPCBackendPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &grpcClient{client: pb.NewBackendClient(c)}, nil
}

type grpcServer struct {
	pb.UnimplementedBackendServer
	impl backend.Backend
}

func (s *grpcServer) Info(ctx context.Context, _ *pb.InfoRequest) (*pb.InfoReply, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, err
	}
	return infoToProto(info), nil
}

func (s *grpcServer) Run(ctx context.Context, req *pb.RunRequest) (*pb.RunReply, error) {
	if raw, ok := s.impl.(backend.RawRunner); ok {
		// A program's own JSON goes through untouched; the host checks it.
		b, err := raw.RunRaw(ctx, runFromProto(req))
		if err != nil {
			return nil, err
		}
		return &pb.RunReply{ResultJson: b}, nil
	}
	res, err := s.impl.Run(ctx, runFromProto(req))
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return &pb.RunReply{ResultJson: raw}, nil
}

func (s *grpcServer) RunBatch(ctx context.Context, req *pb.RunBatchRequest) (*pb.RunBatchReply, error) {
	reqs := make([]backend.RunRequest, len(req.Requests))
	for i, r := range req.Requests {
		reqs[i] = runFromProto(r)
	}
	results, err := backend.RunAll(ctx, s.impl, reqs)
	if errors.Is(err, backend.ErrCannotBatch) {
		// The code an older plugin without the rpc gives: one answer for both.
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if err != nil {
		return nil, err
	}
	out := &pb.RunBatchReply{}
	for _, res := range results {
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		out.ResultJson = append(out.ResultJson, raw)
	}
	return out, nil
}

func (s *grpcServer) Export(ctx context.Context, req *pb.ExportRequest) (*pb.ExportReply, error) {
	resp, err := s.impl.Export(ctx, exportFromProto(req))
	if err != nil {
		return nil, err
	}
	return &pb.ExportReply{Status: string(resp.Status), Message: resp.Message, Device: deviceToProto(resp.Device)}, nil
}

type grpcClient struct {
	client pb.BackendClient
}

var (
	_ backend.Backend     = (*grpcClient)(nil)
	_ backend.BatchRunner = (*grpcClient)(nil)
)

func (c *grpcClient) Info(ctx context.Context) (backend.Info, error) {
	rep, err := c.client.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		return backend.Info{}, err
	}
	return infoFromProto(rep), nil
}

// Run returns the backend's result after checking it against the schema, so
// a malformed result never reaches the statistics or the results folder.
func (c *grpcClient) Run(ctx context.Context, req backend.RunRequest) (result.Result, error) {
	rep, err := c.client.Run(ctx, runToProto(req))
	if err != nil {
		return result.Result{}, err
	}
	return result.DecodeBackendResult(rep.ResultJson)
}

// RunBatch sends every request in one call; each result is checked against
// the schema like Run's. UNIMPLEMENTED becomes backend.ErrCannotBatch.
func (c *grpcClient) RunBatch(ctx context.Context, reqs []backend.RunRequest) ([]result.Result, error) {
	in := &pb.RunBatchRequest{}
	for _, r := range reqs {
		in.Requests = append(in.Requests, runToProto(r))
	}
	rep, err := c.client.RunBatch(ctx, in)
	if no := declined(err, backend.ErrCannotBatch); no != nil {
		return nil, no
	}
	if err != nil {
		return nil, err
	}
	if len(rep.ResultJson) != len(reqs) {
		return nil, fmt.Errorf("run batch: backend returned %d results for %d requests", len(rep.ResultJson), len(reqs))
	}
	out := make([]result.Result, len(reqs))
	for i, raw := range rep.ResultJson {
		if out[i], err = result.DecodeBackendResult(raw); err != nil {
			return nil, fmt.Errorf("run batch: result %d: %w", i, err)
		}
	}
	return out, nil
}

func (c *grpcClient) Export(ctx context.Context, req backend.ExportRequest) (backend.ExportResponse, error) {
	rep, err := c.client.Export(ctx, exportToProto(req))
	if err != nil {
		return backend.ExportResponse{}, err
	}
	return backend.ExportResponse{Status: result.Status(rep.Status), Message: rep.Message,
		Device: deviceFromProto(rep.Device)}, nil
}

// declined is the client's side of an optional rpc the plugin answered
// UNIMPLEMENTED (no such rpc, or the backend said it cannot): the
// capability's sentinel (backend.ErrCannotCalibrate, ...) with the server's
// words, said once, since a backend that wrapped the sentinel already starts
// its message with it; nil for any other answer.
func declined(err, sentinel error) error {
	if status.Code(err) != codes.Unimplemented {
		return nil
	}
	msg := strings.TrimPrefix(status.Convert(err).Message(), sentinel.Error()+": ")
	return fmt.Errorf("%w: %s", sentinel, msg)
}
