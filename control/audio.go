package control

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/onairhq/onair/audio"
)

// AudioRequest is POST /buses/{bus}/audio: a change to the bus's mix made
// on air (audio.Change: the fields sent are changed, the rest kept; a
// strip's change names its source).
type AudioRequest = audio.Change

// Mixer is a Show whose buses mix sound: SetAudio changes a bus's mix on
// air (errors wrap showerr.ErrNotFound for an unknown bus or source, showerr.ErrInvalid for
// a value out of range).
type Mixer interface {
	SetAudio(bus string, req AudioRequest) error
}

func (s *Server) audioHandler(w http.ResponseWriter, r *http.Request) {
	mx, ok := s.show.(Mixer)
	if !ok {
		writeError(w, http.StatusNotFound, "this show mixes no sound")
		return
	}
	var req AudioRequest
	if !readBody(w, r, &req, `{"source": "source.NAME", "gain_db": -6, "mute": false, "pan": 0, "mode": "follow"} or {"master_db": -3}`) {
		return
	}
	bus := r.PathValue("bus")
	if err := mx.SetAudio(bus, req); err != nil {
		showError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"bus": bus, "changed": req})
}

// SetAudio changes a bus's mix on air (POST /buses/{bus}/audio).
func (c *Client) SetAudio(bus string, req AudioRequest) error {
	b, _ := json.Marshal(req)
	path := "/buses/" + bus + "/audio"
	ans, err := c.do("POST", path, b)
	if err != nil {
		return err
	}
	var done struct{ Bus string }
	if json.Unmarshal(ans, &done) != nil || done.Bus != bus {
		return fmt.Errorf("POST %s: the server did not confirm the change (it answered %.200s)", path, ans)
	}
	return nil
}
