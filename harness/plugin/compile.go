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

// Compile serves the optional capability; a backend without it, or one
// that says it cannot (backend.ErrCannotCompile), answers UNIMPLEMENTED,
// as a plugin built before the rpc existed does.
func (s *grpcServer) Compile(ctx context.Context, req *pb.RunRequest) (*pb.CompileReply, error) {
	c, ok := s.impl.(backend.Compiler)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this backend cannot compile ahead")
	}
	out, err := c.Compile(ctx, runFromProto(req))
	if errors.Is(err, backend.ErrCannotCompile) {
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return &pb.CompileReply{Status: string(out.Status), Message: out.Message, CompileMs: out.CompileMs,
		Settings: out.Settings}, nil
}

var _ backend.Compiler = (*grpcClient)(nil)

// Compile asks the plugin; UNIMPLEMENTED becomes backend.ErrCannotCompile.
func (c *grpcClient) Compile(ctx context.Context, req backend.RunRequest) (backend.Compiled, error) {
	rep, err := c.client.Compile(ctx, runToProto(req))
	if no := declined(err, backend.ErrCannotCompile); no != nil {
		return backend.Compiled{}, no
	}
	if err != nil {
		return backend.Compiled{}, fmt.Errorf("compile: %w", err)
	}
	return backend.Compiled{Status: result.Status(rep.Status), Message: rep.Message, CompileMs: rep.CompileMs,
		Settings: rep.Settings}, nil
}
