package cli

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/lang"
)

// checkEncoders asks the ffmpeg on $PATH (once a process: `ffmpeg
// -encoders`) whether it has the encoders the show's delivery outputs
// name, and says which ffmpeg where one is missing, at the output's video
// block. validate, plan and run check it: the machine that runs the
// command is the one that would encode. A machine with no ffmpeg at all
// (one that only lints shows) gets a warning, once.
func checkEncoders(show *lang.Show) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, o := range show.Outputs {
		if o.Delivery == nil {
			continue
		}
		ff, err := delivery.ProbeFFmpeg("")
		if err != nil {
			rng := o.DeclRange
			return append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Encoders not checked",
				Detail: "No ffmpeg to ask which encoders it has: " + err.Error() + ". The delivery outputs fail at start where it is missing.", Subject: &rng})
		}
		if err = ff.Check(o.Delivery.Video, o.Delivery.Audio); err == nil {
			continue
		}
		rng := o.DeclRange
		for _, at := range []string{"audio.codec", "video.encoder", "video.codec"} {
			if r, ok := o.Attrs[at]; ok {
				rng = r
			}
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Encoder not available",
			Detail: o.Address() + ": " + err.Error() + ".", Subject: &rng})
	}
	return diags
}
