package compiler

// pickProfile chooses the capacity profile: Options.CustomProfile, else
// Options.Profile, else the show's profile, else DefaultProfile.
//
// Needs: the show. Leaves: st.Profile, or an error at show.profile naming
// the profiles there are.

import (
	"fmt"
	"strings"
)

func pickProfile(st *state) {
	if st.Options.CustomProfile != nil {
		st.Profile = st.Options.CustomProfile
		return
	}
	name, rng := st.Options.Profile, rangePtr(st.Show.DeclRange)
	if name == "" {
		name = st.Show.Profile
		if r, ok := st.Show.Attrs["profile"]; ok {
			rng = &r
		}
	}
	if name == "" {
		name = DefaultProfile
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
		if d := editDistance(s, o); d < bestD {
			best, bestD = o, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
