package compiler

// auxRoutes is what build gives an AUX bus with routes: the list it may be
// switched to (what it starts with first, then its routes, each once;
// sources by their addresses, which the runtime draws over the whole
// canvas) and the sources that feed its compositor (each routed source and
// each source a routed scene draws, in the show's order). A bus without
// routes keeps its one source or scene, as before routes existed.

import "github.com/onairhq/onair/lang"

func auxRoutes(all []*lang.Source, bus *lang.Bus) (list []string, inputs []*lang.Source) {
	routes := bus.Routes
	if bus.Source != nil {
		routes = append([]lang.Route{{Source: bus.Source}}, routes...)
	} else if bus.Scene != nil {
		routes = append([]lang.Route{{Scene: bus.Scene}}, routes...)
	}
	seen := map[string]bool{}
	used := map[*lang.Source]bool{}
	var scenes []*lang.Scene
	for _, r := range routes {
		if seen[r.Address()] {
			continue
		}
		seen[r.Address()] = true
		list = append(list, r.Address())
		if r.Source != nil {
			used[r.Source] = true
		} else {
			scenes = append(scenes, r.Scene)
		}
	}
	for _, src := range sourcesOfScenes(all, scenes) {
		used[src] = true
	}
	for _, src := range all {
		if used[src] {
			inputs = append(inputs, src)
		}
	}
	return list, inputs
}
