package candidate

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/orrery/orrery/engine/cassini/link"
	"github.com/orrery/orrery/engine/cassini/profile"
)

// cache remembers link searches across Rank calls: a scheduler ranks again
// at every arrival, and most of its links carry the same jobs as before.
// Entries are keyed by a hash of everything a search depends on (the fixed
// shifts of an incremental ranking's problems included) and checked
// against a full copy, so a hash collision can cost a search, never a wrong
// answer. put keeps at most its limit (Workspace.Cache), evicting the oldest
// first. The key is computed by the caller, outside the lock.
type cache struct {
	mu      sync.Mutex
	entries map[uint64][]*entry
	order   []*entry // insertion order, for eviction
	seed    maphash.Seed
	seeded  sync.Once
}

type entry struct {
	key      uint64
	capacity int32
	opt      link.Options
	jobs     []profile.Profile // copies
	fixed    []int             // the jobs' fixed shifts, or nil
	shifts   []int
	excess   int64
	status   link.Status
}

// hash returns the key of a link problem: a hash of its demands, capacity,
// search options and fixed shifts (this process's only: the cache is in
// memory).
func (c *cache) hash(ps []profile.Profile, capacity int32, opt link.Options, fixed []int) uint64 {
	c.seeded.Do(func() { c.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(c.seed)
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(capacity))
	put(uint64(opt.Mode))
	put(uint64(opt.Budget))
	put(uint64(opt.Restarts))
	put(opt.Seed)
	put(uint64(opt.Circle.MaxPerimeter))
	put(uint64(len(fixed)))
	for _, f := range fixed {
		put(uint64(f))
	}
	buf := make([]byte, 0, 512)
	for _, p := range ps {
		put(uint64(p.Period))
		buf = buf[:0]
		for _, d := range p.Demand {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(d))
		}
		h.Write(buf)
	}
	return h.Sum64()
}

func (e *entry) matches(ps []profile.Profile, capacity int32, opt link.Options, fixed []int) bool {
	if e.capacity != capacity || e.opt != opt || len(e.jobs) != len(ps) || (e.fixed == nil) != (fixed == nil) || !slices.Equal(e.fixed, fixed) {
		return false
	}
	for i, p := range ps {
		if e.jobs[i].Period != p.Period || !slices.Equal(e.jobs[i].Demand, p.Demand) {
			return false
		}
	}
	return true
}

// get returns the remembered search of the problem whose hash is
// key, if any.
func (c *cache) get(key uint64, ps []profile.Profile, capacity int32, opt link.Options, fixed []int) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries[key] {
		if e.matches(ps, capacity, opt, fixed) {
			return e, true
		}
	}
	return nil, false
}

// put remembers a search under key, keeping at most limit entries.
// Results cut short by a deadline depend on the machine's speed and are
// not kept.
func (c *cache) put(key uint64, limit int, ps []profile.Profile, capacity int32, opt link.Options, fixed []int, res link.Result) {
	if res.Status == link.TimeLimit || limit <= 0 {
		return
	}
	e := &entry{key: key, capacity: capacity, opt: opt, fixed: slices.Clone(fixed),
		shifts: slices.Clone(res.Shifts), excess: res.Excess, status: res.Status}
	for _, p := range ps {
		e.jobs = append(e.jobs, profile.Profile{Period: p.Period, Demand: slices.Clone(p.Demand)})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[uint64][]*entry)
	}
	for _, old := range c.entries[e.key] {
		if old.matches(ps, capacity, opt, fixed) {
			return // another worker got there first
		}
	}
	c.entries[e.key] = append(c.entries[e.key], e)
	c.order = append(c.order, e)
	for len(c.order) > limit {
		old := c.order[0]
		c.order = c.order[1:]
		list := c.entries[old.key]
		if i := slices.Index(list, old); i >= 0 {
			list = slices.Delete(list, i, i+1)
		}
		if len(list) == 0 {
			delete(c.entries, old.key)
		} else {
			c.entries[old.key] = list
		}
	}
}
