package topology

import (
	"fmt"
	"testing"
)

// BenchmarkNew builds Clos fabrics of 1,000 to 100,000 servers: time and
// memory grow with the links.
func BenchmarkNew(b *testing.B) {
	for _, pods := range []int{1, 10, 40} {
		s := Spec{Pods: pods, ToRsPerPod: 50, ServersPerToR: 50, AggsPerPod: 8, Cores: 32, ServerGbps: 400, ToRGbps: 400, AggGbps: 400}
		b.Run(fmt.Sprintf("servers=%d", pods*2500), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRoute routes across pods (6 hops) into a reused buffer.
func BenchmarkRoute(b *testing.B) {
	tp, err := New(Spec{Pods: 40, ToRsPerPod: 50, ServersPerToR: 50, AggsPerPod: 8, Cores: 32, ServerGbps: 400, ToRGbps: 400, AggGbps: 400})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]int, 0, 6)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf, _ = tp.AppendRoute(buf[:0], i%tp.Servers, (i*7919+50000)%tp.Servers)
		i++
	}
}
