package backend

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorTextStripsTransportWords(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("rpc error: code = Unknown desc = export burnstyle-hip: read x: no such file"), "export burnstyle-hip: read x: no such file"},
		{fmt.Errorf("run: %w", errors.New("rpc error: code = Canceled desc = context canceled")), "run: context canceled"},
		{errors.New("plain"), "plain"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := ErrorText(tt.err); got != tt.want {
			t.Errorf("ErrorText(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
