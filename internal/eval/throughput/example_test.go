package throughput_test

import (
	"fmt"

	"github.com/orrery/orrery/internal/eval/data"
	"github.com/orrery/orrery/internal/eval/throughput"
)

// Load the authors' table (the copy inside the binary, package data) and
// derive an epoch time from it: ResNet-18 at batch size 32 on one V100
// reads 50 000 samples per epoch.
func ExampleTable_Alone() {
	f, err := data.Shockwave.Open("tacc_throughputs.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	tab, err := throughput.Load(f)
	if err != nil {
		panic(err)
	}
	key := throughput.Key{Model: "ResNet-18", BatchSize: 32, GPUs: 1}
	tput, err := tab.Alone("v100", key)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %.1f it/s, epoch %.1f s\n", key, tput, 50000.0/32/tput)

	k, err := throughput.ParseKey("('LM (batch size 80)', 4)")
	fmt.Println(k.Model, k.BatchSize, k.GPUs, err)
	// Output:
	// ('ResNet-18 (batch size 32)', 1): 43.0 it/s, epoch 36.4 s
	// LM 80 4 <nil>
}
