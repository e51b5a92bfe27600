package plugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xbench/xbench/harness/backend"
	pb "github.com/xbench/xbench/harness/plugin/proto"
)

// Calibrate serves the optional capability. A backend without it, or one
// that says it cannot (backend.ErrCannotCalibrate), answers UNIMPLEMENTED,
// the same code an older plugin without the rpc gives, so the client sees
// one answer for both.
func (s *grpcServer) Calibrate(ctx context.Context, req *pb.CalibrateRequest) (*pb.CalibrateReply, error) {
	c, ok := s.impl.(backend.Calibrator)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this backend has no calibration")
	}
	cal, err := c.Calibrate(ctx, backend.CalibrateRequest{Device: req.Device, Dtypes: req.Dtypes})
	if errors.Is(err, backend.ErrCannotCalibrate) {
		return nil, status.Error(codes.Unimplemented, err.Error())
	}
	if err != nil {
		return nil, err
	}
	return &pb.CalibrateReply{Device: deviceToProto(cal.Device), MatmulTflops: cal.MatmulTFLOPs,
		CopyGbps: cal.CopyGBps, Method: cal.Method}, nil
}

var _ backend.Calibrator = (*grpcClient)(nil)

// Calibrate asks the plugin; UNIMPLEMENTED becomes backend.ErrCannotCalibrate.
func (c *grpcClient) Calibrate(ctx context.Context, req backend.CalibrateRequest) (backend.Calibration, error) {
	rep, err := c.client.Calibrate(ctx, &pb.CalibrateRequest{Device: req.Device, Dtypes: req.Dtypes})
	if no := declined(err, backend.ErrCannotCalibrate); no != nil {
		return backend.Calibration{}, no
	}
	if err != nil {
		return backend.Calibration{}, fmt.Errorf("calibrate: %w", err)
	}
	return backend.Calibration{Device: deviceFromProto(rep.Device), MatmulTFLOPs: rep.MatmulTflops,
		CopyGBps: rep.CopyGbps, Method: rep.Method}, nil
}
