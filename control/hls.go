package control

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
)

// hlsFile is what GET /hls/{output}/{file} serves of an HLS directory:
// its playlist and its segments, named as the hls output writes them, and
// nothing else in that directory or outside it.
var hlsFile = regexp.MustCompile(`^(index\.m3u8|segment_[0-9]{6,}\.ts)$`)

// hlsHandler serves an HLS output's playlist and segments, for players
// pointed at http://HOST/hls/NAME/index.m3u8.
func (s *Server) hlsHandler(w http.ResponseWriter, r *http.Request) {
	output, file := r.PathValue("output"), r.PathValue("file")
	hs, ok := s.show.(HLSServer)
	var dir string
	if ok {
		dir, ok = hs.HLSDir(output)
	}
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no HLS output %q is served: name an output \"hls\" of the show with serve = true", output))
		return
	}
	if !hlsFile.MatchString(file) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%q is not a file an HLS output writes: index.m3u8 or segment_NNNNNN.ts", file))
		return
	}
	f, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s of %s: not written yet, or already deleted from the live playlist", file, output))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if filepath.Ext(file) == ".m3u8" {
		w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		w.Header().Set("Cache-Control", "no-cache") // a live playlist changes every segment
	} else {
		w.Header().Set("Content-Type", "video/mp2t")
	}
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
