package emulator

import (
	"net"
	"testing"
)

func TestReachableAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 25}, "127.0.0.1:25"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 25}, "127.0.0.1:25"},
		{&net.TCPAddr{Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 443}, "10.0.0.7:443"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 443}, "[::1]:443"},
	}
	for _, tt := range tests {
		got, err := ReachableAddr(tt.addr)
		if err != nil || got != tt.want {
			t.Errorf("ReachableAddr(%v) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
	if _, err := ReachableAddr(&net.UnixAddr{Name: "/tmp/sock", Net: "unix"}); err == nil {
		t.Error("ReachableAddr(unix socket) succeeded, want an error")
	}
}
