package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
	"github.com/xbench/xbench/harness/result"
)

// Burst serves the optional capability as Compile does: a backend without
// it, or one that says it cannot (backend.ErrCannotBurst), answers
// UNIMPLEMENTED, as a plugin built before the rpc existed does.
func (s *grpcServer) Burst(ctx context.Context, req *pb.BurstRequest) (*pb.BurstReply, error) {
	b, ok := s.impl.(backend.Burster)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this backend has no burst op")
	}
	rep, err := b.Burst(ctx, backend.BurstRequest{Run: runFromProto(req.Run), Calls: int(req.Calls), Rounds: int(req.Rounds),
		Limit: time.Duration(req.LimitMs * float64(time.Millisecond))})
	if errors.Is(err, backend.ErrCannotBurst) {
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return &pb.BurstReply{Status: string(rep.Status), Message: rep.Message, Calls: int64(rep.Calls), WallMs: rep.WallMs,
		Unfinished: rep.Unfinished}, nil
}

var _ backend.Burster = (*grpcClient)(nil)

// Burst asks the plugin; UNIMPLEMENTED becomes backend.ErrCannotBurst.
func (c *grpcClient) Burst(ctx context.Context, req backend.BurstRequest) (backend.BurstReport, error) {
	rep, err := c.client.Burst(ctx, &pb.BurstRequest{Run: runToProto(req.Run), Calls: int64(req.Calls), Rounds: int64(req.Rounds),
		LimitMs: float64(req.Limit) / float64(time.Millisecond)})
	if no := declined(err, backend.ErrCannotBurst); no != nil {
		return backend.BurstReport{}, no
	}
	if err != nil {
		return backend.BurstReport{}, fmt.Errorf("burst: %w", err)
	}
	return backend.BurstReport{Status: result.Status(rep.Status), Message: rep.Message, Calls: int(rep.Calls), WallMs: rep.WallMs,
		Unfinished: rep.Unfinished}, nil
}
