package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client talks to a running show's server.
type Client struct {
	Addr  string // host:port
	Token string
	HTTP  *http.Client
}

func (c *Client) url(path string) string {
	addr := c.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/") + path
	}
	return "http://" + addr + path
}

func (c *Client) do(method, path string, body []byte) ([]byte, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequest(method, c.url(path), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the show at %s: %v (is `onair run` running with -listen %s?)", c.url(""), err, c.Addr)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s %s: %s", method, path, e.Error)
		}
		return nil, fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return b, nil
}

// Status returns the show's status as raw JSON.
func (c *Client) Status() ([]byte, error) { return c.do("GET", "/status", nil) }

// Switch asks for a cut, fade or wipe to scene on bus.
func (c *Client) Switch(bus, scene, kind string, d time.Duration) error {
	req := SwitchRequest{Scene: scene}
	if d > 0 {
		req.Duration = d.String()
	}
	b, _ := json.Marshal(req)
	_, err := c.do("POST", "/buses/"+bus+"/"+kind, b)
	return err
}
