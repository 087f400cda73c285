package orrery

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/orrery/orrery/internal/codec"
)

// Session holds the objects of schema v1's stateful operations, by handle:
// "shockwave.scheduler.new" starts a [Scheduler] and answers its handle,
// the other "shockwave.scheduler.*" operations take the handle and run the
// Scheduler's method, and "shockwave.scheduler.close" releases it. A host
// keeps one Session per engine: the WebAssembly module one per instance,
// the C library one per orrery_session (and one behind orrery_call), the
// Go binding one per Scheduler's instance. [Call] and [Handle] have no
// Session: they run the stateless operations only.
//
// Handles are integers from 1, never reused within a Session, so a stale
// handle is an error rather than another caller's Scheduler. At most
// [MaxHandles] are open at once.
//
// A Session is safe for concurrent use; calls on one handle run one at a
// time, in the order they take its lock.
type Session struct {
	mu      sync.Mutex
	next    int64
	handles map[int64]*entry
	jobs    atomic.Int64 // active jobs over all its schedulers
	bytes   atomic.Int64 // the state they keep (see MaxSessionBytes)
}

// MaxHandles is the most handles a Session keeps open; a "new" past it is
// a limit_exceeded error.
const MaxHandles = 1024

// Caps on a Session as a whole, so that no sequence of accepted calls
// grows it without bound (issue 29): a call past one is a limit_exceeded
// error naming the field that would pass it, and changes nothing.
const (
	// MaxSessionJobs caps the active jobs over all of a Session's
	// schedulers (each of which the planner's own limit,
	// market.MaxJobs, caps too): MaxHandles schedulers are not 1024
	// times as many jobs.
	MaxSessionJobs = 1 << 20
	// MaxSessionBytes caps the state a Session keeps for its jobs: each
	// job's lists and the planner's tables on them (round.JobBytes,
	// within about 10% of the heap they take), its timeline and finish
	// history as they grow, and its id. add and observe, which grow it
	// with the caller's data, are refused past it; a schedule's
	// re-estimate (16 bytes a job, after an arrival or a departure)
	// is never refused and may pass it by that much. remove and close
	// give the bytes back.
	MaxSessionBytes = 1 << 30
	// MaxPlanIDBytes caps the ids a scheduler's plan lists: (2 × its
	// window + 1) × the bytes of its active jobs' ids as JSON (each with
	// its comma). last_plan lists each job at most twice a round (in
	// rounds and backfill) and once in jobs, so its ids take at most
	// this; an add past it is refused. Integer ids (at most 21 bytes)
	// reach it only past a third of the planner's value cells
	// (market.MaxCells); 1 KB string ids at a window of 1024 rounds
	// reach it at 32 jobs.
	MaxPlanIDBytes = 64 << 20
)

// entry is one open handle: an *idScheduler or an *agentEntry.
type entry struct {
	mu sync.Mutex
	v  any
}

// NewSession returns an empty Session.
func NewSession() *Session { return &Session{handles: map[int64]*entry{}} }

// Call runs op on the JSON request, as the package's [Call] does, with the
// stateful operations on this Session.
func (s *Session) Call(ctx context.Context, op string, request []byte) ([]byte, error) {
	return call(ctx, s, op, request)
}

// Handle runs an envelope, as the package's [Handle] does, with the
// stateful operations on this Session.
func (s *Session) Handle(ctx context.Context, env []byte) []byte { return handle(ctx, s, env) }

// Len returns the number of open handles.
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handles)
}

// Close releases every handle.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.handles)
	s.jobs.Store(0)
	s.bytes.Store(0)
}

// Bytes returns the state the Session's schedulers keep for their jobs,
// as MaxSessionBytes counts it, and their active jobs.
func (s *Session) Bytes() (bytes, jobs int64) { return s.bytes.Load(), s.jobs.Load() }

// sessionCaps are MaxSessionJobs and MaxSessionBytes, as reserve reads
// them (a test lowers them).
var sessionCaps = struct{ jobs, bytes int64 }{MaxSessionJobs, MaxSessionBytes}

// reserve takes n bytes and jobs jobs of the Session's caps, or reports
// which one they would pass (leaving both as they were).
func (s *Session) reserve(n, jobs int64) error {
	if got := s.jobs.Add(jobs); got > sessionCaps.jobs {
		s.jobs.Add(-jobs)
		return fmt.Errorf("%w: %d active jobs in this session's schedulers, above %d", ErrTooLarge, got, sessionCaps.jobs)
	}
	if got := s.bytes.Add(n); got > sessionCaps.bytes {
		s.bytes.Add(-n)
		s.jobs.Add(-jobs)
		return fmt.Errorf("%w: this session's jobs would keep %d bytes, above %d (remove jobs, or close schedulers)", ErrTooLarge, got, sessionCaps.bytes)
	}
	return nil
}

// release gives back what reserve took.
func (s *Session) release(n, jobs int64) {
	s.bytes.Add(-n)
	s.jobs.Add(-jobs)
}

// open registers an object (a scheduler or an agent) and returns its
// handle.
func (s *Session) open(v any) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.handles) >= MaxHandles {
		return 0, &Error{Code: CodeLimit, Message: fmt.Sprintf("%d handles (schedulers and agents) are open in this session: close one (shockwave.scheduler.close, cassini.agent.close)", MaxHandles)}
	}
	if s.handles == nil {
		s.handles = map[int64]*entry{}
	}
	s.next++
	s.handles[s.next] = &entry{v: v}
	return s.next, nil
}

// with runs f on the Scheduler of handle h, holding its lock.
func (s *Session) with(h int64, f func(*idScheduler) (any, error)) (any, error) {
	return withKind(s, h, "scheduler", f)
}

// withKind runs f on the object of handle h, which must be a T, holding
// its lock.
func withKind[T any](s *Session, h int64, kind string, f func(T) (any, error)) (any, error) {
	s.mu.Lock()
	e := s.handles[h]
	s.mu.Unlock()
	if e == nil {
		return nil, fieldError("handle", fmt.Errorf("%w: %d is not open in this session", ErrUnknownHandle, h))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.v.(T)
	if !ok {
		other := "an agent's"
		if kind == "agent" {
			other = "a scheduler's"
		}
		return nil, fieldError("handle", fmt.Errorf("%w: %d is %s handle, not %s", ErrUnknownHandle, h, other, article(kind)+"'s"))
	}
	return f(v)
}

// close releases handle h.
func (s *Session) close(h int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handles[h] == nil {
		return fieldError("handle", fmt.Errorf("%w: %d is not open in this session", ErrUnknownHandle, h))
	}
	delete(s.handles, h)
	return nil
}

// JobID is a job's id in the stateful operations: a JSON integer or a
// non-empty JSON string. The zero value is no id.
type JobID struct {
	str   string
	num   int
	isStr bool
	set   bool
	raw   []byte // as decoded, until checked
}

// IntID returns the integer id n.
func IntID(n int) JobID { return JobID{num: n, set: true} }

// StringID returns the string id s.
func StringID(s string) JobID { return JobID{str: s, isStr: true, set: true} }

// Int returns the id's integer and whether it is one.
func (id JobID) Int() (int, bool) { return id.num, id.set && !id.isStr }

// Str returns the id's string and whether it is one.
func (id JobID) Str() (string, bool) { return id.str, id.set && id.isStr }

// String returns the id as JSON would spell it: 7 or "a".
func (id JobID) String() string {
	b, _ := id.MarshalJSON()
	return string(b)
}

// MarshalJSON encodes an integer id as a number, a string id as a string.
func (id JobID) MarshalJSON() ([]byte, error) {
	if id.isStr {
		return codec.AppendString(nil, id.str), nil
	}
	return strconv.AppendInt(nil, int64(id.num), 10), nil
}

// The codec writes and reads ids with these functions directly, not
// through the interfaces of MarshalJSON and UnmarshalJSON (see
// codec.Register).
func init() {
	codec.Register(func(dst []byte, id JobID) []byte {
		if id.isStr {
			return codec.AppendString(dst, id.str)
		}
		return strconv.AppendInt(dst, int64(id.num), 10)
	}, func(id *JobID, raw []byte) { id.UnmarshalJSON(raw) })
}

// UnmarshalJSON decodes an integer or a non-empty string. It never fails:
// a value that is not an id is kept for the operation to refuse, naming
// its field (encoding/json cannot say where an Unmarshaler's error was).
func (id *JobID) UnmarshalJSON(b []byte) error {
	*id = JobID{raw: bytes.Clone(b)}
	if id.parse() == "" {
		id.raw = nil
	}
	return nil
}

// parse turns the decoded bytes into an id (an integer literal that fits
// an int, or a non-empty valid string) or says why not.
func (id *JobID) parse() string {
	b := bytes.TrimSpace(id.raw)
	switch {
	case len(b) == 0:
		return "no id"
	case b[0] == '"':
		if !codec.ValidString(b) {
			return "not valid UTF-8"
		}
		s := codec.Unquote(b)
		switch {
		case s == "":
			return "empty"
		case len(s) > MaxStringBytes:
			return "long"
		}
		*id = StringID(s)
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil || int64(int(n)) != n {
			return "JSON number " + string(b) + " is not an integer that fits 64 bits"
		}
		*id = IntID(int(n))
	default:
		return "JSON " + codec.Kind(b[0])
	}
	return ""
}

// check reports, naming field, why the id is not one.
func (id *JobID) check(field string) error {
	if id.set {
		return nil
	}
	switch why := id.parse(); why {
	case "":
		return nil
	case "empty":
		return fieldError(field, ErrEmptyID)
	case "long":
		// Like every string of a request (the codec's check; an id's
		// bytes are kept as they came, to be refused here by name).
		return fieldError(field, fmt.Errorf("%w: an id of %d bytes, above the %d-byte limit of a string", ErrTooLarge, len(codec.Unquote(bytes.TrimSpace(id.raw))), MaxStringBytes))
	default:
		return fieldError(field, fmt.Errorf("%w: %s (want an integer or a non-empty string)", ErrInvalid, why))
	}
}

// idScheduler is a Scheduler behind a handle, with the mapping between the
// caller's ids and the Scheduler's integers. Integer ids are the
// Scheduler's own, so a scheduler driven with integers answers exactly as
// [Scheduler] does; string ids get the integers 0, 1, 2, ... in the order
// they are added, so ties between jobs the planner cannot otherwise order
// go to the job added first. One Scheduler takes one kind: the first Add
// decides.
type idScheduler struct {
	s      *Scheduler
	kind   int            // 0 none yet, 1 integers, 2 strings
	live   map[int]bool   // active integer ids (kindInt)
	ints   map[string]int // active string ids (kindStr)
	names  map[int]string // their inverse, and the removed ones the last plan may name
	nextID int
	window int // the plan's rounds, for MaxPlanIDBytes

	// retired are removed string ids still in names, which the last plan
	// may list; a plan made after their removal lists none of them
	// (retiredAt: the plans made when the last one left).
	retired   []int
	retiredAt int
	planned   int // nextID when the last plan was made: later ids are in no plan
	plans     int // the plans made when planned was read

	idBytes   int64 // what names, ints and live keep
	planBytes int64 // the active ids' JSON bytes, each with a comma
	counted   int64 // the bytes this scheduler holds of its Session's count
}

// idCost is what the maps of the ids keep for one, besides its text: two
// entries of a Go map.
const idCost = 96

// jsonLen is the length of id as JSON, with a comma.
func jsonLen(id JobID) int64 {
	var buf [32]byte
	if n, ok := id.Int(); ok {
		return int64(len(strconv.AppendInt(buf[:0], int64(n), 10))) + 1
	}
	str, _ := id.Str()
	return int64(len(codec.AppendString(buf[:0], str))) + 1
}

// sync brings the Session's count of bytes up to date with what m keeps.
func (m *idScheduler) sync(s *Session) {
	now := m.s.s.Bytes() + m.idBytes
	s.bytes.Add(now - m.counted)
	m.counted = now
}

// forget drops the names of the removed string ids once a plan made after
// their removal replaced the one that may list them.
func (m *idScheduler) forget() {
	if plans := m.s.s.Plans(); plans != m.plans {
		m.planned, m.plans = m.nextID, plans
	}
	if plans := m.s.s.Plans(); len(m.retired) == 0 || (plans > 0 && plans <= m.retiredAt) {
		return
	}
	for _, n := range m.retired {
		m.idBytes -= int64(len(m.names[n])) + idCost/2
		delete(m.names, n)
	}
	m.retired = m.retired[:0]
}

const (
	kindInt = 1
	kindStr = 2
)

// active returns the Scheduler's integer for id, an ErrUnknownID error
// naming field when the job is not active.
func (m *idScheduler) active(field string, id *JobID) (int, error) {
	n, active, err := m.internal(field, id)
	if err == nil && !active {
		err = unknownID(field, *id)
	}
	return n, err
}

// internal returns the Scheduler's integer for id, and whether the job is
// active. It checks the id's kind against the Scheduler's.
func (m *idScheduler) internal(field string, id *JobID) (int, bool, error) {
	if err := id.check(field); err != nil {
		return 0, false, err
	}
	if n, ok := id.Int(); ok {
		if m.kind == kindStr {
			return 0, false, fieldError(field, fmt.Errorf("%w: %d is an integer, this scheduler's ids are strings", ErrInvalid, n))
		}
		return n, m.live[n], nil
	}
	str, _ := id.Str()
	if m.kind == kindInt {
		return 0, false, fieldError(field, fmt.Errorf("%w: %q is a string, this scheduler's ids are integers", ErrInvalid, str))
	}
	n, ok := m.ints[str]
	return n, ok, nil
}

// external returns the caller's id for the Scheduler's integer n.
func (m *idScheduler) external(n int) JobID {
	if m.kind == kindStr {
		return StringID(m.names[n])
	}
	return IntID(n)
}

func (m *idScheduler) externals(ns []int) []JobID {
	out := make([]JobID, len(ns))
	for i, n := range ns {
		out[i] = m.external(n)
	}
	return out
}

func unknownID(field string, id JobID) error {
	return fieldError(field, fmt.Errorf("%w: %s is not active", ErrUnknownID, id))
}

// article returns the noun with its indefinite article.
func article(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
