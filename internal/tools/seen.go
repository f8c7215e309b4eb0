package tools

// seenSet remembers up to max keys, forgetting the oldest first. The
// toolset uses it to write each reply to the conversation store once (per
// task and state) and to record each delegation once, without a map that
// grows for as long as the plugin runs.
type seenSet struct {
	max   int
	keys  map[string]struct{}
	order []string // ring of keys in insertion order, once full
	next  int      // oldest entry of order, once full
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, keys: map[string]struct{}{}}
}

// add remembers k and reports whether it was already remembered.
func (s *seenSet) add(k string) (seen bool) {
	if _, ok := s.keys[k]; ok {
		return true
	}
	if len(s.order) < s.max {
		s.order = append(s.order, k)
	} else {
		delete(s.keys, s.order[s.next])
		s.order[s.next] = k
		s.next = (s.next + 1) % s.max
	}
	s.keys[k] = struct{}{}
	return false
}
