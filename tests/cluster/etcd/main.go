// Command etcd is the test cluster's store: etcd's own server, embedded, with
// every listener on 127.0.0.1 and nothing else to configure. It is its own
// module because etcd pins newer gRPC and OpenTelemetry releases than the
// Kubernetes release the control plane is built from.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dir := flag.String("data-dir", "", "directory for the member's data")
	clientPort := flag.Int("client-port", 2379, "port on 127.0.0.1 for clients")
	peerPort := flag.Int("peer-port", 2380, "port on 127.0.0.1 for the (single) peer")
	flag.Parse()
	if *dir == "" {
		log.Fatal("etcd: --data-dir is required")
	}

	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", *peerPort)}
	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = *dir
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// A throwaway store: durability across power loss is worth nothing here,
	// and fsync dominates write latency on a shared disk.
	cfg.UnsafeNoFsync = true

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: %v", err)
	}
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		server.Close()
		log.Fatal("etcd: not ready within 60s")
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-signals:
		server.Close()
	case err := <-server.Err():
		server.Close()
		log.Fatalf("etcd: %v", err)
	}
}
