// Package kafka is Herald's in-process Kafka-protocol broker, for
// development and tests (issue 20 item 9): franz-go's kfake, which speaks
// the real Kafka wire protocol — produce, fetch, consumer groups, offset
// commits — so Herald's consumer and any other Kafka client talk to it as
// they would to a cluster. `herald serve --dev` starts one unless
// kafka.brokers is set; `herald emulate kafka` runs one for a project's
// own tests. It keeps everything in memory.
package kafka

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// DefaultPartitions is the partition count of a seeded topic: seed 003's
// notification topics have six.
const DefaultPartitions = 6

// Config configures a Broker.
type Config struct {
	// Addr is the listen address, host:port; port 0 picks a free one.
	// Default 127.0.0.1:0.
	Addr string
	// Topics are created at start, each with Partitions partitions.
	// Others are created on first use with as many.
	Topics []string
	// Partitions per topic; default DefaultPartitions.
	Partitions int32
	// Options are passed to kfake after Herald's own (tests add fault
	// injection or group timeouts).
	Options []kfake.Opt
}

// Broker is a running in-process Kafka-protocol broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
}

// Start starts a broker.
func Start(cfg Config) (*Broker, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = DefaultPartitions
	}
	host, portText, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("kafka emulator: listen address %q: %w", cfg.Addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("kafka emulator: listen address %q: bad port", cfg.Addr)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		// kfake listens on 127.0.0.1; keep the host the caller asked for.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort(host, portText))
		}),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(int(cfg.Partitions)),
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(cfg.Partitions, cfg.Topics...))
	}
	c, err := kfake.NewCluster(append(opts, cfg.Options...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka emulator: %w", err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) == 0 {
		c.Close()
		return nil, fmt.Errorf("kafka emulator: no listener")
	}
	return &Broker{cluster: c, addr: addrs[0]}, nil
}

// Addr is the broker's address, host:port: a client's seed broker.
func (b *Broker) Addr() string { return b.addr }

// Cluster is the kfake cluster, for fault injection in tests
// (ControlKey, SleepControl, ShufflePartitionLeaders, …).
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker.
func (b *Broker) Close() error {
	b.cluster.Close()
	return nil
}
