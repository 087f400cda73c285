package orrery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSessionCaps: past MaxSessionJobs or MaxSessionBytes (lowered here)
// an add or an observe is a limit_exceeded error that changes nothing;
// remove and close give the room back. Before issue 29 nothing bounded
// a session as a whole (1024 handles × 199,728 jobs were allowed).
func TestSessionCaps(t *testing.T) {
	defer func(c struct{ jobs, bytes int64 }) { sessionCaps = c }(sessionCaps)
	type answer struct {
		Response json.RawMessage `json:"response"`
		Error    *Error          `json:"error"`
	}
	for _, c := range []struct {
		name       string
		jobs, byts int64
		field      string
	}{{"jobs", 5, MaxSessionBytes, "job"}, {"bytes", MaxSessionJobs, 6000, "job"}} {
		t.Run(c.name, func(t *testing.T) {
			sessionCaps.jobs, sessionCaps.bytes = c.jobs, c.byts
			s := NewSession()
			call := func(line string) answer {
				var a answer
				if err := json.Unmarshal(s.Handle(context.Background(), []byte(line)), &a); err != nil {
					t.Fatal(err)
				}
				return a
			}
			add := func(h, id int) answer {
				return call(fmt.Sprintf(`{"op":"shockwave.scheduler.add","request":{"handle":%d,"job":{"id":%d,"gpus":1,"submit_s":1,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36],"samples_per_epoch":100}}}`, h, id))
			}
			call(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`)
			call(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`)
			// Jobs alternate between the two schedulers until the cap.
			n := 0
			var refused answer
			for ; n < 100; n++ {
				if a := add(1+n%2, n); a.Error != nil {
					refused = a
					break
				}
			}
			if refused.Error == nil || refused.Error.Code != CodeLimit || refused.Error.Field != c.field {
				t.Fatalf("after %d adds: %+v, want a limit on %s", n, refused.Error, c.field)
			}
			bytes, jobs := s.Bytes()
			if jobs != int64(n) || bytes > sessionCaps.bytes {
				t.Errorf("%d adds: the session counts %d jobs and %d bytes", n, jobs, bytes)
			}
			// A refused add changed nothing: the same add is refused again.
			if a := add(1+n%2, n); a.Error == nil || a.Error.Message != refused.Error.Message {
				t.Errorf("again: %+v, want %+v", a.Error, refused.Error)
			}
			// Room back: remove one from the other scheduler, close one.
			if a := call(fmt.Sprintf(`{"op":"shockwave.scheduler.remove","request":{"handle":%d,"id":%d}}`, 1+(n-1)%2, n-1)); a.Error != nil {
				t.Fatal(a.Error)
			}
			if a := add(1+n%2, n); a.Error != nil {
				t.Errorf("after a remove: %+v", a.Error)
			}
			call(`{"op":"shockwave.scheduler.close","request":{"handle":1}}`)
			call(`{"op":"shockwave.scheduler.close","request":{"handle":2}}`)
			if bytes, jobs := s.Bytes(); bytes != 0 || jobs != 0 {
				t.Errorf("all closed: the session counts %d jobs and %d bytes", jobs, bytes)
			}
		})
	}
	// An observe is refused at the byte cap too.
	sessionCaps.jobs, sessionCaps.bytes = MaxSessionJobs, 1<<20
	s := NewSession()
	s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.new","request":{"gpus":4}}`))
	s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.add","request":{"handle":1,"job":{"id":1,"gpus":1,"submit_s":1,"progress":0,"epoch_bs":[32,32],"epoch_dur_s":[36,36],"samples_per_epoch":100}}}`))
	bytes, _ := s.Bytes()
	sessionCaps.bytes = bytes + 2*observeBytes
	var last []byte
	for r := range 4 {
		s.Handle(context.Background(), []byte(`{"op":"shockwave.scheduler.end_round","request":{"handle":1}}`))
		last = s.Handle(context.Background(), []byte(fmt.Sprintf(`{"op":"shockwave.scheduler.observe","request":{"handle":1,"id":1,"sample":{"round":%d,"it_per_s":9,"bs":32}}}`, r+1)))
	}
	if !strings.Contains(string(last), `"code":"limit_exceeded","field":"sample"`) {
		t.Errorf("the third observe past the cap answered %s", last)
	}
}
