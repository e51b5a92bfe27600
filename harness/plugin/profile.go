package plugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
	"github.com/xbench/xbench/harness/result"
)

// Profile serves the optional capability the way Calibrate does: a backend
// without it, or one that says it cannot (backend.ErrCannotProfile),
// answers UNIMPLEMENTED, as a plugin built before the rpc existed does.
func (s *grpcServer) Profile(ctx context.Context, req *pb.ProfileRequest) (*pb.ProfileReply, error) {
	p, ok := s.impl.(backend.Profiler)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this backend has no profiler")
	}
	rep, err := p.Profile(ctx, backend.ProfileRequest{Workload: req.Workload, Variant: req.Variant, Device: req.Device,
		Config: configFromProto(req.Config), Calls: int(req.Calls), TracePath: req.TracePath})
	if errors.Is(err, backend.ErrCannotProfile) {
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if err != nil {
		return nil, err
	}
	out := &pb.ProfileReply{Status: string(rep.Status), Message: rep.Message, Device: deviceToProto(rep.Device),
		Profiler: rep.Profiler, TimeKind: rep.TimeKind, WallMs: rep.WallMs, Calls: int64(rep.Calls), TracePath: rep.TracePath}
	for _, k := range rep.Kernels {
		out.Kernels = append(out.Kernels, &pb.KernelTime{Name: k.Name, SelfMs: k.SelfMs, Count: k.Count})
	}
	return out, nil
}

var _ backend.Profiler = (*grpcClient)(nil)

// Profile asks the plugin; UNIMPLEMENTED becomes backend.ErrCannotProfile.
func (c *grpcClient) Profile(ctx context.Context, req backend.ProfileRequest) (backend.ProfileReport, error) {
	rep, err := c.client.Profile(ctx, &pb.ProfileRequest{Workload: req.Workload, Variant: req.Variant, Device: req.Device,
		Config: configToProto(req.Config), Calls: int64(req.Calls), TracePath: req.TracePath})
	if no := declined(err, backend.ErrCannotProfile); no != nil {
		return backend.ProfileReport{}, no
	}
	if err != nil {
		return backend.ProfileReport{}, fmt.Errorf("profile: %w", err)
	}
	out := backend.ProfileReport{Status: result.Status(rep.Status), Message: rep.Message, Device: deviceFromProto(rep.Device),
		Profiler: rep.Profiler, TimeKind: rep.TimeKind, WallMs: rep.WallMs, Calls: int(rep.Calls), TracePath: rep.TracePath}
	for _, k := range rep.Kernels {
		out.Kernels = append(out.Kernels, backend.KernelTime{Name: k.Name, SelfMs: k.SelfMs, Count: k.Count})
	}
	return out, nil
}
