// Command faultproxy stands between a client and the test cluster's API server
// and makes the faults a real network and a busy API server make: error answers
// (503 and 429 in turn), watches cut part way, and added latency, on a schedule
// set by its flags. It listens on plain HTTP on loopback (no authentication;
// the test's kubeconfig points there) and forwards to the API server over TLS
// with the cluster's client certificate.
//
// It prints its address on the first line of stdout, and answers
// GET /faultproxy/stats with what it injected, every read it forwarded and, for
// every watch, the resourceVersion it started from and the last one it
// delivered.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"time"
)

type watchRecord struct {
	Path string `json:"path"`
	// From is the resourceVersion the watch asked to start from ("" for none).
	From string `json:"from"`
	// Last is the resourceVersion of the last event delivered ("" for none).
	Last string `json:"last"`
	Cut  bool   `json:"cut"`
}

type stats struct {
	mu          sync.Mutex
	Requests    int            `json:"requests"`
	Answered503 int            `json:"answered_503"`
	Answered429 int            `json:"answered_429"`
	WatchesCut  int            `json:"watches_cut"`
	Watches     []*watchRecord `json:"watches"`
	// Reads are the GETs that were not watches, as path and query, in order.
	Reads []string `json:"reads"`
}

// eventReader passes a watch stream through and notes the resourceVersion of
// each event (one JSON object a line) it delivers.
type eventReader struct {
	body   io.ReadCloser
	record *watchRecord
	st     *stats
	line   bytes.Buffer
}

func (e *eventReader) Read(p []byte) (int, error) {
	n, err := e.body.Read(p)
	for _, b := range p[:n] {
		if b != '\n' {
			e.line.WriteByte(b)
			continue
		}
		var event struct {
			Object struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if json.Unmarshal(e.line.Bytes(), &event) == nil && event.Object.Metadata.ResourceVersion != "" {
			e.st.mu.Lock()
			e.record.Last = event.Object.Metadata.ResourceVersion
			e.st.mu.Unlock()
		}
		e.line.Reset()
	}
	return n, err
}

func (e *eventReader) Close() error { return e.body.Close() }

type ctxKey struct{}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	upstream := flag.String("upstream", "", "the API server's URL (https://…)")
	caFile := flag.String("ca", "", "the API server's CA certificate (PEM)")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	failEvery := flag.Int("fail-every", 0, "answer every Nth request that is not a watch with an error, 503 and 429 in turn (0: never)")
	cutWatches := flag.Duration("cut-watches", 0, "cut every watch this long after it started (0: never)")
	latency := flag.Duration("latency", 0, "delay every request by this much")
	flag.Parse()

	target, err := url.Parse(*upstream)
	if err != nil || target.Host == "" {
		log.Fatalf("faultproxy: -upstream %q is not a URL", *upstream)
	}
	caPEM, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatalf("faultproxy: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		log.Fatalf("faultproxy: no certificate in %s", *caFile)
	}
	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("faultproxy: %v", err)
	}

	st := &stats{Watches: []*watchRecord{}, Reads: []string{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
		MaxIdleConnsPerHost: 64,
	}
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if record, ok := resp.Request.Context().Value(ctxKey{}).(*watchRecord); ok {
			resp.Body = &eventReader{body: resp.Body, record: record, st: st}
		}
		return nil
	}

	var count int
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/faultproxy/stats" {
			st.mu.Lock()
			defer st.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(st)
			return
		}
		if *latency > 0 {
			time.Sleep(*latency)
		}
		q := r.URL.Query()
		watch := q.Get("watch") == "true" || q.Get("watch") == "1"
		st.mu.Lock()
		st.Requests++
		fail := 0
		if !watch && *failEvery > 0 {
			count++
			if count%*failEvery == 0 {
				if (count / *failEvery)%2 == 1 {
					fail = http.StatusServiceUnavailable
					st.Answered503++
				} else {
					fail = http.StatusTooManyRequests
					st.Answered429++
				}
			}
		}
		if !watch && r.Method == http.MethodGet {
			st.Reads = append(st.Reads, r.URL.RequestURI())
		}
		var record *watchRecord
		if watch {
			record = &watchRecord{Path: r.URL.Path, From: q.Get("resourceVersion")}
			st.Watches = append(st.Watches, record)
		}
		st.mu.Unlock()
		if fail != 0 {
			reason, message := "ServiceUnavailable", "the server is currently unable to handle the request (injected)"
			if fail == http.StatusTooManyRequests {
				reason, message = "TooManyRequests", "too many requests, please try again later (injected)"
				w.Header().Set("Retry-After", "1")
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(fail)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`, message, reason, fail)
			return
		}
		if watch {
			ctx := context.WithValue(r.Context(), ctxKey{}, record)
			var cancel context.CancelFunc = func() {}
			if *cutWatches > 0 {
				ctx, cancel = context.WithTimeout(ctx, *cutWatches)
			}
			defer cancel()
			defer func() {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					st.mu.Lock()
					record.Cut = true
					st.WatchesCut++
					st.mu.Unlock()
				}
			}()
			r = r.WithContext(ctx)
		}
		proxy.ServeHTTP(w, r)
	})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("faultproxy: %v", err)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, ln.Addr().String())
	_ = out.Flush()
	log.Fatal(http.Serve(ln, handler))
}
