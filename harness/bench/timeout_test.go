package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestTimedOut(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-expired.Done()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"our deadline passed", expired, errors.New("anything"), true},
		// The plugin's side expired first: our ctx has not noticed yet.
		{"plugin reported the deadline", live, status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM"), true},
		{"wrapped deadline error", live, errors.Join(errors.New("run"), context.DeadlineExceeded), true},
		{"a crash is not a timeout", live, status.Error(codes.Unavailable, "EOF"), false},
		{"plain error", live, errors.New("boom"), false},
	}
	for _, tt := range tests {
		if got := timedOut(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: timedOut = %v, want %v", tt.name, got, tt.want)
		}
	}
}
