package emulator

import "net"

// ReachableAddr returns the "host:port" a client dials to reach a listener
// on addr. A wildcard listener (":0", "0.0.0.0:0", "[::]:0") is reachable
// on loopback, so its host is given as 127.0.0.1: a URL built from it works
// both on this machine and as a certificate name.
func ReachableAddr(addr net.Addr) (string, error) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
