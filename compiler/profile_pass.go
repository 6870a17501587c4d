package compiler

// pickProfile chooses the capacity profile: Options.CustomProfile, else
// Options.Profile, else the show's profile, else the backend's (its
// lowering names the GPU its figures are checked against). For a backend
// that draws in host memory it is a CPU profile: Options.HostProfile (the
// machine's, HostProfile) unless -profile or the show's profile names
// another CPU profile (a machine class whose encoders were measured); a
// show's GPU profile names the GPU it is meant for and is not used.
//
// Needs: the show. Leaves: st.Profile, or an error at show.profile naming
// the profiles there are.

import (
	"fmt"
	"strings"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

func pickProfile(st *state) {
	if st.Options.CustomProfile != nil {
		st.Profile = st.Options.CustomProfile
		return
	}
	name, rng := st.Options.Profile, rangePtr(st.Show.DeclRange)
	if t := st.Options.Target; t != nil && t.Domain == nodes.Host {
		if p, ok := LookupProfile(st.Show.Profile); name == "" && ok && p.Backend == "cpu" {
			name = st.Show.Profile // the show names a CPU profile: a machine class measured
			if r, ok := st.Show.Attrs["profile"]; ok {
				rng = &r
			}
		}
		if name == "" || name == t.Profile {
			// the host's cores and memory, where onair compiles
			if st.Options.HostProfile != nil {
				st.Profile = st.Options.HostProfile
				return
			}
			name = t.Profile
		}
		// else -profile names a GPU's: used, and the estimate says so
	}
	if name == "" {
		name = st.Show.Profile
		if r, ok := st.Show.Attrs["profile"]; ok {
			rng = &r
		}
	}
	if name == "" {
		name = st.Options.DeviceProfile
	}
	if name == "" {
		name = st.Options.Target.Profile
	}
	p, ok := LookupProfile(name)
	if !ok {
		st.errorf(rng, "Unknown capacity profile", "There is no capacity profile %q. The profiles are: %s.%s", name, strings.Join(ProfileNames(), ", "), didYouMean(name, ProfileNames()))
		return
	}
	st.Profile = p
}

func didYouMean(s string, options []string) string {
	best, bestD := "", 4
	for _, o := range options {
		if d := lang.EditDistance(s, o); d < bestD {
			best, bestD = o, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}
