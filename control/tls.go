package control

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// CheckTLS reports whether a server may listen on addr with token and the
// certificate and key files given: both or neither, and a token on an
// address other than loopback only over TLS, unless insecure (the
// operator's explicit choice, e.g. behind a proxy that terminates TLS) —
// without TLS anyone on the path reads the token and can cut the show.
func CheckTLS(addr, token, certFile, keyFile string, insecure bool) error {
	if (certFile == "") != (keyFile == "") {
		return fmt.Errorf("TLS needs both a certificate and its key: give -tls-cert FILE and -tls-key FILE, or neither")
	}
	if addr == "" {
		addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || isLoopback(host) || token == "" || certFile != "" || insecure {
		return nil
	}
	return fmt.Errorf("listen address %q is not a loopback address and the token would travel in clear, for anyone on the path to read and cut the show: give -tls-cert FILE and -tls-key FILE (PEM), or -insecure-remote-token when a proxy in front terminates TLS", addr)
}

// loadServerTLS reads a PEM certificate (chain) and key for the server.
func loadServerTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %v (give PEM files, the certificate first in its file)", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// clientTLS is the TLS configuration of a client: the system's roots, or
// only the CA certificates in c.CA when it names a file.
func (c *Client) clientTLS() (*tls.Config, error) {
	if c.CA == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(c.CA)
	if err != nil {
		return nil, fmt.Errorf("-tls-ca: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-tls-ca %s holds no PEM certificate", c.CA)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// transport is the client's transport with dial and header timeouts
// (headers: 0 for none), trusting c.CA when set.
func (c *Client) transport(headers time.Duration) (*http.Transport, error) {
	cfg, err := c.clientTLS()
	if err != nil {
		return nil, err
	}
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: headers,
		TLSClientConfig:       cfg,
		Proxy:                 http.ProxyFromEnvironment,
	}, nil
}
