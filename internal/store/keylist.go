package store

import "sort"

// keyChunk bounds the chunks of a keyList. Inserting or removing moves at
// most this many keys; finding a chunk is a binary search over the chunks.
const keyChunk = 256

// keyList is an ordered set of task keys in ListTasks order (newest
// first), the index structure of the Memory store. It is a list of sorted
// chunks: cheap to update anywhere, cheap to seek, and rank (how many keys
// come before a position) costs one pass over the chunk lengths, which is
// what TotalSize with a StatusAfter filter needs.
type keyList struct {
	chunks [][]taskKey
	n      int
}

// Len is the number of keys.
func (l *keyList) Len() int { return l.n }

// chunkFor returns the index of the chunk where k belongs: the first chunk
// whose last key does not sort before k, or the last chunk.
func (l *keyList) chunkFor(k taskKey) int {
	i := sort.Search(len(l.chunks), func(i int) bool {
		c := l.chunks[i]
		return !c[len(c)-1].before(k)
	})
	if i == len(l.chunks) && i > 0 {
		i--
	}
	return i
}

// search returns the position of the first key in chunk c not before k.
func search(c []taskKey, k taskKey) int {
	return sort.Search(len(c), func(i int) bool { return !c[i].before(k) })
}

// firstChunk is the capacity of a list's first chunk. Most lists are
// small (the Memory store keeps one per context and per owner/state, and a
// context usually holds a task or two), so chunks start small and grow by
// doubling up to keyChunk; a full-size first chunk cost 6 KiB per context.
const firstChunk = 2

// Insert adds k; inserting a key already present is a no-op.
func (l *keyList) Insert(k taskKey) {
	if len(l.chunks) == 0 {
		l.chunks = append(l.chunks, append(make([]taskKey, 0, firstChunk), k))
		l.n++
		return
	}
	ci := l.chunkFor(k)
	c := l.chunks[ci]
	j := search(c, k)
	if j < len(c) && c[j] == k {
		return
	}
	if len(c) == cap(c) {
		// Grow by doubling, but never past what a chunk can hold before
		// it splits.
		grown := make([]taskKey, len(c), min(2*cap(c), keyChunk+1))
		copy(grown, c)
		c = grown
	}
	c = c[:len(c)+1]
	copy(c[j+1:], c[j:])
	c[j] = k
	l.n++
	if len(c) <= keyChunk {
		l.chunks[ci] = c
		return
	}
	// Split a full chunk in two halves, each with room to grow.
	half := len(c) / 2
	right := append(make([]taskKey, 0, keyChunk), c[half:]...)
	clear(c[half:])
	l.chunks[ci] = c[:half]
	l.chunks = append(l.chunks, nil)
	copy(l.chunks[ci+2:], l.chunks[ci+1:])
	l.chunks[ci+1] = right
}

// Delete removes k if present.
func (l *keyList) Delete(k taskKey) {
	if len(l.chunks) == 0 {
		return
	}
	ci := l.chunkFor(k)
	c := l.chunks[ci]
	j := search(c, k)
	if j == len(c) || c[j] != k {
		return
	}
	copy(c[j:], c[j+1:])
	c[len(c)-1] = taskKey{}
	c = c[:len(c)-1]
	l.n--
	if len(c) > 0 {
		l.chunks[ci] = c
		return
	}
	copy(l.chunks[ci:], l.chunks[ci+1:])
	l.chunks[len(l.chunks)-1] = nil
	l.chunks = l.chunks[:len(l.chunks)-1]
}

// Last returns the key that sorts last (the oldest), if any.
func (l *keyList) Last() (taskKey, bool) {
	if len(l.chunks) == 0 {
		return taskKey{}, false
	}
	c := l.chunks[len(l.chunks)-1]
	return c[len(c)-1], true
}

// Rank returns how many keys sort before k.
func (l *keyList) Rank(k taskKey) int {
	if len(l.chunks) == 0 {
		return 0
	}
	ci := l.chunkFor(k)
	r := 0
	for _, c := range l.chunks[:ci] {
		r += len(c)
	}
	return r + search(l.chunks[ci], k)
}

// Ascend calls fn for each key from the first key not before from (or the
// first key when all is true) in order, until fn returns false.
func (l *keyList) Ascend(from taskKey, all bool, fn func(taskKey) bool) {
	ci, j := 0, 0
	if !all && len(l.chunks) > 0 {
		ci = l.chunkFor(from)
		j = search(l.chunks[ci], from)
	}
	for ; ci < len(l.chunks); ci, j = ci+1, 0 {
		for _, k := range l.chunks[ci][j:] {
			if !fn(k) {
				return
			}
		}
	}
}

// Descend calls fn for each key from the last (oldest) backwards, until fn
// returns false.
func (l *keyList) Descend(fn func(taskKey) bool) {
	for ci := len(l.chunks) - 1; ci >= 0; ci-- {
		c := l.chunks[ci]
		for j := len(c) - 1; j >= 0; j-- {
			if !fn(c[j]) {
				return
			}
		}
	}
}
