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
// command is the one that would encode.
func checkEncoders(show *lang.Show) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, o := range show.Outputs {
		if o.Delivery == nil {
			continue
		}
		ff, err := delivery.ProbeFFmpeg("")
		if err == nil {
			err = ff.Check(o.Delivery.Video, o.Delivery.Audio)
		}
		if err == nil {
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
