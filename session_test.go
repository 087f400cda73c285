package orrery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orrery/orrery"
)

// sessionCall runs op on s and decodes the response into a map or slice.
func sessionCall(t *testing.T, s *orrery.Session, op string, req any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Call(context.Background(), op, b)
	if err != nil {
		t.Fatalf("%s %s: %v", op, b, err)
	}
	return out
}

func sessionErr(t *testing.T, s *orrery.Session, op, req string) *orrery.Error {
	t.Helper()
	_, err := s.Call(context.Background(), op, []byte(req))
	var we *orrery.Error
	if !errors.As(err, &we) {
		t.Fatalf("%s %s: got %v, want an *orrery.Error", op, req, err)
	}
	return we
}

// jobWithID is job j as shockwave.scheduler.add's job, with id.
func jobWithID(j orrery.ShockwaveJob, id any) map[string]any {
	b, _ := json.Marshal(j)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["id"] = id
	return m
}

// TestSessionIsScheduler: the stateful ops answer, round for round, what
// orrery.Scheduler answers for the same calls: with integer ids the same
// ids and a last plan byte-identical to the typed one; with string ids
// (added in the same order) the same rounds under the caller's names.
func TestSessionIsScheduler(t *testing.T) {
	ctx := context.Background()
	rounds := 5
	cfg := orrery.ShockwaveConfig{Rounds: &rounds, ReoptRounds: 3}
	jobs := []orrery.ShockwaveJob{swJob(1, 2, 8, 200), swJob(2, 1, 6, 150), swJob(3, 1, 10, 120), swJob(4, 2, 4, 300), swJob(5, 1, 5, 100)}
	typed, err := orrery.NewScheduler(4, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := orrery.NewSession()
	var h [2]int64
	for k := range h {
		var r orrery.SchedulerHandle
		json.Unmarshal(sessionCall(t, s, "shockwave.scheduler.new", orrery.SchedulerNewRequest{GPUs: 4, Config: cfg}), &r)
		h[k] = r.Handle
	}
	if h != [2]int64{1, 2} {
		t.Fatalf("handles %v, want [1 2]", h)
	}
	name := func(id int) string { return "job-" + strconv.Itoa(id) }
	add := func(j orrery.ShockwaveJob) {
		if err := typed.Add(j); err != nil {
			t.Fatal(err)
		}
		sessionCall(t, s, "shockwave.scheduler.add", map[string]any{"handle": h[0], "job": jobWithID(j, j.ID)})
		sessionCall(t, s, "shockwave.scheduler.add", map[string]any{"handle": h[1], "job": jobWithID(j, name(j.ID))})
	}
	each := func(op string, req map[string]any, id int) {
		req["handle"], req["id"] = h[0], id
		sessionCall(t, s, op, req)
		req["handle"], req["id"] = h[1], name(id)
		sessionCall(t, s, op, req)
	}
	for _, j := range jobs[:3] {
		add(j)
	}
	progress := map[int]int{}
	active := map[int]bool{1: true, 2: true, 3: true}
	for r := range 12 {
		want, err := typed.Schedule(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got [2]orrery.SchedulerSchedule
		for k := range h {
			json.Unmarshal(sessionCall(t, s, "shockwave.scheduler.schedule", orrery.SchedulerRequest{Handle: h[k]}), &got[k])
		}
		wantInts, wantNames := []string{}, []string{}
		for _, id := range want {
			wantInts, wantNames = append(wantInts, strconv.Itoa(id)), append(wantNames, strconv.Quote(name(id)))
		}
		for k, w := range [][]string{wantInts, wantNames} {
			ids := []string{}
			for _, id := range got[k].Jobs {
				ids = append(ids, id.String())
			}
			if diff := cmp.Diff(w, ids); diff != "" || got[k].Round != r {
				t.Fatalf("round %d, scheduler %d (round %d): ids differ from orrery.Scheduler's (-want +got):\n%s", r, k, got[k].Round, diff)
			}
		}
		plan, _ := typed.LastPlan()
		wantPlan, _ := json.Marshal(map[string]any{"plan": plan})
		if gotPlan := sessionCall(t, s, "shockwave.scheduler.last_plan", orrery.SchedulerRequest{Handle: h[0]}); string(gotPlan) != string(wantPlan) {
			t.Fatalf("round %d: last_plan\n%s\nwant\n%s", r, gotPlan, wantPlan)
		}
		for _, id := range want {
			progress[id]++
			if err := typed.Progress(id, progress[id]); err != nil {
				t.Fatal(err)
			}
			each("shockwave.scheduler.progress", map[string]any{"epochs": progress[id]}, id)
			sample := orrery.ThroughputSpec{Round: r + 1, ItPerS: 10, BS: 32}
			if err := typed.Observe(id, sample); err != nil {
				t.Fatal(err)
			}
			each("shockwave.scheduler.observe", map[string]any{"sample": sample}, id)
		}
		for id := range active {
			if progress[id] >= 4 {
				delete(active, id)
				if err := typed.Remove(id); err != nil {
					t.Fatal(err)
				}
				each("shockwave.scheduler.remove", map[string]any{}, id)
			}
		}
		if r == 2 || r == 5 {
			j := jobs[3+r/5]
			add(j)
			active[j.ID] = true
		}
		typed.EndRound()
		for k := range h {
			sessionCall(t, s, "shockwave.scheduler.end_round", orrery.SchedulerRequest{Handle: h[k]})
		}
	}
	for k := range h {
		sessionCall(t, s, "shockwave.scheduler.close", orrery.SchedulerRequest{Handle: h[k]})
	}
	if s.Len() != 0 {
		t.Fatalf("%d handles open after closing both", s.Len())
	}
}

// TestSessionErrors: each refused call names its field, wraps its
// sentinel and changes nothing.
func TestSessionErrors(t *testing.T) {
	s := orrery.NewSession()
	sessionCall(t, s, "shockwave.scheduler.new", map[string]any{"gpus": 4})
	job := func(id any) string {
		b, _ := json.Marshal(map[string]any{"handle": 1, "job": jobWithID(swJob(1, 1, 4, 100), id)})
		return string(b)
	}
	sessionCall(t, s, "shockwave.scheduler.add", json.RawMessage(job(7)))
	state := string(sessionCall(t, s, "shockwave.scheduler.end_round", map[string]any{"handle": 1}))
	for _, c := range []struct {
		op, req, code, field string
		is                   error
	}{
		{"shockwave.scheduler.add", job(7), orrery.CodeInvalid, "job.id", orrery.ErrDuplicateID},
		{"shockwave.scheduler.add", job("seven"), orrery.CodeInvalid, "job.id", orrery.ErrInvalid},
		{"shockwave.scheduler.add", job(7.5), orrery.CodeInvalid, "job.id", orrery.ErrInvalid},
		{"shockwave.scheduler.add", job(true), orrery.CodeInvalid, "job.id", orrery.ErrInvalid},
		{"shockwave.scheduler.add", `{"handle": 1, "job": {"id": 8, "gpus": 1, "submit_s": 0, "progress": 0, "epoch_bs": [32, 32], "epoch_dur_s": [10, -1]}}`, orrery.CodeInvalid, "job.epoch_dur_s[1]", orrery.ErrInvalid},
		{"shockwave.scheduler.add", `{"handle": 1, "job": {"id": 8, "gpus": 9, "submit_s": 0, "progress": 0, "epoch_bs": [32], "epoch_dur_s": [10]}}`, orrery.CodeInvalid, "job.gpus", orrery.ErrInvalid},
		{"shockwave.scheduler.add", `{"handle": 1, "job": {"id": 8, "gpu": 1}}`, orrery.CodeMalformed, "job.gpu", orrery.ErrMalformed},
		{"shockwave.scheduler.remove", `{"handle": 1, "id": 8}`, orrery.CodeInvalid, "id", orrery.ErrUnknownID},
		{"shockwave.scheduler.progress", `{"handle": 1, "id": 7, "epochs": 99}`, orrery.CodeInvalid, "epochs", orrery.ErrInvalid},
		{"shockwave.scheduler.observe", `{"handle": 1, "id": 7, "sample": {"round": 0, "it_per_s": -1, "bs": 32}}`, orrery.CodeInvalid, "sample.it_per_s", orrery.ErrInvalid},
		{"shockwave.scheduler.schedule", `{"handle": 2}`, orrery.CodeInvalid, "handle", orrery.ErrUnknownHandle},
		{"shockwave.scheduler.close", `{"handle": 0}`, orrery.CodeInvalid, "handle", orrery.ErrUnknownHandle},
		{"shockwave.scheduler.new", `{"gpus": 0}`, orrery.CodeInvalid, "gpus", orrery.ErrInvalid},
		{"shockwave.scheduler.new", `{"gpus": 4, "config": {"reopt_rounds": -2}}`, orrery.CodeInvalid, "config.reopt_rounds", orrery.ErrInvalid},
	} {
		e := sessionErr(t, s, c.op, c.req)
		if e.Code != c.code || e.Field != c.field || !errors.Is(e, c.is) {
			t.Errorf("%s %s: got %s %q %q, want %s %q wrapping %v", c.op, c.req, e.Code, e.Field, e.Message, c.code, c.field, c.is)
		}
	}
	if got := string(sessionCall(t, s, "shockwave.scheduler.close", map[string]any{"handle": 1})); got != state {
		t.Errorf("state after the refused calls %s, before %s", got, state)
	}
	if e := sessionErr(t, s, "shockwave.scheduler.end_round", `{"handle": 1}`); !errors.Is(e, orrery.ErrUnknownHandle) {
		t.Errorf("a closed handle: %v", e)
	}
	// Without a Session the stateful ops are refused, not run on hidden
	// global state.
	if _, err := orrery.Call(context.Background(), "shockwave.scheduler.new", []byte(`{"gpus": 4}`)); !errors.Is(err, orrery.ErrInvalid) {
		t.Errorf("orrery.Call ran a stateful op: %v", err)
	}
}

// TestSessionStringIDsNeverMix: a scheduler's first add fixes its ids'
// kind.
func TestSessionStringIDsNeverMix(t *testing.T) {
	s := orrery.NewSession()
	sessionCall(t, s, "shockwave.scheduler.new", map[string]any{"gpus": 4})
	sessionCall(t, s, "shockwave.scheduler.add", map[string]any{"handle": 1, "job": jobWithID(swJob(1, 1, 4, 100), "a")})
	b, _ := json.Marshal(map[string]any{"handle": 1, "job": jobWithID(swJob(2, 1, 4, 100), 2)})
	if e := sessionErr(t, s, "shockwave.scheduler.add", string(b)); e.Field != "job.id" {
		t.Errorf("an integer id after a string id: %v", e)
	}
	if e := sessionErr(t, s, "shockwave.scheduler.remove", `{"handle": 1, "id": ""}`); e.Field != "id" || !errors.Is(e, orrery.ErrEmptyID) {
		t.Errorf("an empty id: %v", e)
	}
}

// TestSessionHandleLimit: at most MaxHandles are open; closing one makes
// room, and handles are never reused.
func TestSessionHandleLimit(t *testing.T) {
	s := orrery.NewSession()
	for range orrery.MaxHandles {
		sessionCall(t, s, "shockwave.scheduler.new", map[string]any{"gpus": 1})
	}
	if e := sessionErr(t, s, "shockwave.scheduler.new", `{"gpus": 1}`); e.Code != orrery.CodeLimit {
		t.Fatalf("handle %d: %v, want limit_exceeded", orrery.MaxHandles+1, e)
	}
	sessionCall(t, s, "shockwave.scheduler.close", map[string]any{"handle": 5})
	got := string(sessionCall(t, s, "shockwave.scheduler.new", map[string]any{"gpus": 1}))
	if want := fmt.Sprintf(`{"handle":%d}`, orrery.MaxHandles+1); got != want {
		t.Fatalf("after a close: %s, want %s", got, want)
	}
}

// FuzzSession: any sequence of envelopes on one Session gets one
// well-formed reply each (a response or an error), and never a panic.
func FuzzSession(f *testing.F) {
	for _, seed := range []string{
		`{"op":"shockwave.scheduler.new","request":{"gpus":4}}` + "\n" + `{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":"a","gpus":1,"submit_s":0,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[60,60]}}}` + "\n" + `{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`,
		`{"op":"cassini.agent.new","request":{"period_ms":72,"shift_ms":3}}` + "\n" + `{"op":"cassini.agent.next","request":{"handle":1,"ready_unix_ms":1e12}}`,
		`{"op":"shockwave.scheduler.close","request":{"handle":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := orrery.NewSession()
		for _, line := range bytes.Split(data, []byte("\n")) {
			var r struct {
				Version  int             `json:"version"`
				Response json.RawMessage `json:"response"`
				Error    *orrery.Error   `json:"error"`
			}
			out := s.Handle(context.Background(), line)
			if err := json.Unmarshal(out, &r); err != nil || r.Version != 1 || (r.Response == nil) == (r.Error == nil) {
				t.Fatalf("%q: reply %s", line, out)
			}
			if r.Error != nil && r.Error.Code == orrery.CodeInternal {
				t.Fatalf("%q: internal error %s", line, out)
			}
		}
	})
}

// The cost of the JSON boundary on a stateful call: a round answered from
// the cached plan, through a Session and through the typed Scheduler.
func BenchmarkScheduleCached(b *testing.B) {
	ctx := context.Background()
	rounds := 1 << 10
	cfg := orrery.ShockwaveConfig{Rounds: &rounds, ReoptRounds: 1 << 20}
	jobs := []orrery.ShockwaveJob{swJob(1, 2, 8, 200), swJob(2, 1, 6, 150), swJob(3, 1, 10, 120)}
	b.Run("typed", func(b *testing.B) {
		s, _ := orrery.NewScheduler(4, cfg)
		for _, j := range jobs {
			s.Add(j)
		}
		s.Schedule(ctx)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Schedule(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("session", func(b *testing.B) {
		s := orrery.NewSession()
		req, _ := json.Marshal(orrery.SchedulerNewRequest{GPUs: 4, Config: cfg})
		s.Call(ctx, "shockwave.scheduler.new", req)
		for _, j := range jobs {
			req, _ := json.Marshal(map[string]any{"handle": 1, "job": jobWithID(j, j.ID)})
			s.Call(ctx, "shockwave.scheduler.add", req)
		}
		env := []byte(`{"op":"shockwave.scheduler.schedule","request":{"handle":1}}`)
		s.Handle(ctx, env)
		b.ReportAllocs()
		for b.Loop() {
			s.Handle(ctx, env)
		}
	})
}
