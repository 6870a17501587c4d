package cpu

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/plan"
)

// TestThePageBadgesALiveSourcesState: on the operator's page, a udp
// source's tile says WAITING before anything is sent, LIVE while onair's
// own sender (as `onair send` runs it) streams a clip to it, and LOST once
// the sender stopped for the loss timeout, each read by the page from
// /status as it goes.
func TestThePageBadgesALiveSourcesState(t *testing.T) {
	peer.NeedFFmpeg(t)
	bin := chromium(t)
	port := freePort(t, "udp")
	p := compile(t, liveShow(t, "udp", fmt.Sprintf("  port = %d\n  loss_timeout_ms = 300\n", port)), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := chromiumPage(t, bin)
	tile := `[data-tile="source.cam"] `
	do(t, ctx, "the tile before a sender",
		chromedp.Navigate("http://"+srv.Addr()+"/"),
		chromedp.WaitVisible(`#app`),
		chromedp.Click(`#show-sources`),
		chromedp.WaitVisible(tile+`[data-live="waiting"]`))
	stop, sent := make(chan struct{}), make(chan error, 1)
	go func() {
		w, err := live.DialUDP(fmt.Sprintf("127.0.0.1:%d", port), false)
		if err != nil {
			sent <- err
			return
		}
		defer w.Close()
		pc := &live.Pacer{Sleep: time.Sleep, Now: time.Now}
		for {
			select {
			case <-stop:
				sent <- nil
				return
			default:
			}
			f, err := os.Open(filepath.Join(clipDir, "hevc8.ts"))
			if err == nil {
				err = pc.Send(w, f)
				f.Close()
			}
			if err != nil {
				sent <- err
				return
			}
		}
	}()
	do(t, ctx, "the tile while the stream arrives", chromedp.WaitVisible(tile+`[data-live="live"]`))
	close(stop)
	if err := <-sent; err != nil {
		t.Fatalf("sender: %v", err)
	}
	do(t, ctx, "the tile once the stream stopped", chromedp.WaitVisible(tile+`[data-live="lost"]`))
}
