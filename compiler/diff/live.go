package diff

import "github.com/onairhq/onair/nodes"

// registryLive reads the Live flag of a param in the nodes/ registry.
func registryLive(kind, param string) bool {
	k, ok := nodes.Lookup(kind)
	if !ok {
		return false
	}
	p, ok := k.Param(param)
	return ok && p.Live
}
