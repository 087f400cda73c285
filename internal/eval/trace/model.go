package trace

import "strconv"

// Model is one of the five workloads of the Shockwave traces
// (upstream scheduler/job_table.py; A3C and CycleGAN are disabled there and
// rejected here).
type Model uint8

// The models, in the order of the upstream job table.
const (
	ResNet18       Model = iota + 1 // ResNet-18 on CIFAR-10
	ResNet50                        // ResNet-50 on an ImageNet subset
	Transformer                     // Transformer on Multi30k
	LM                              // LSTM language model on Wikitext-2
	Recommendation                  // autoencoder recommendation on ML-20M
)

// Models lists the models in upstream order.
func Models() []Model { return []Model{ResNet18, ResNet50, Transformer, LM, Recommendation} }

// String returns the model's name as written in traces ("ResNet-18").
func (m Model) String() string {
	switch m {
	case ResNet18:
		return "ResNet-18"
	case ResNet50:
		return "ResNet-50"
	case Transformer:
		return "Transformer"
	case LM:
		return "LM"
	case Recommendation:
		return "Recommendation"
	}
	return "Model(" + strconv.Itoa(int(m)) + ")"
}

// ParseModel returns the model named s (as written in traces).
func ParseModel(s string) (Model, bool) {
	for _, m := range Models() {
		if m.String() == s {
			return m, true
		}
	}
	return 0, false
}

// Dataset returns the model's dataset name (upstream model_dataset_mapping).
func (m Model) Dataset() string {
	switch m {
	case ResNet18:
		return "CIFAR-10"
	case ResNet50:
		return "ImageNet"
	case Transformer:
		return "Multi30k"
	case LM:
		return "Wikitext-2"
	case Recommendation:
		return "ML-20M"
	}
	return ""
}

// SamplesPerEpoch returns the size of the model's dataset, D (upstream
// dataset_len in scheduler/utils.py).
func (m Model) SamplesPerEpoch() int {
	switch m {
	case ResNet18:
		return 50000
	case ResNet50:
		return 100000
	case Transformer:
		return 10000
	case LM:
		return 59675
	case Recommendation:
		return 117907
	}
	return 0
}

// BatchSizes returns the batch sizes the model can run at: those of the
// upstream job table plus the ones dynamic adaptation reaches (ResNet-18 at
// 16 appears in the GNS rules, ResNet-50 at 128 is its adaptation cap).
func (m Model) BatchSizes() []int {
	switch m {
	case ResNet18:
		return []int{16, 32, 64, 128, 256}
	case ResNet50:
		return []int{16, 32, 64, 128}
	case Transformer:
		return []int{16, 32, 64, 128}
	case LM:
		return []int{5, 10, 20, 40, 80}
	case Recommendation:
		return []int{512, 1024, 2048, 4096, 8192}
	}
	return nil
}

// ValidBatchSize reports whether bs is one of m.BatchSizes().
func (m Model) ValidBatchSize(bs int) bool {
	for _, b := range m.BatchSizes() {
		if b == bs {
			return true
		}
	}
	return false
}

// MaxBatchSize returns the largest batch size adaptation may reach: the
// GNS cap (upstream bs_limit), which is also Accordion's large batch size.
func (m Model) MaxBatchSize() int {
	switch m {
	case ResNet18:
		return 256
	case ResNet50:
		return 128
	case Transformer:
		return 128
	case LM:
		return 80
	case Recommendation:
		return 8192
	}
	return 0
}

// Distributed reports whether the model may run on more than one GPU
// (upstream: every template but Recommendation).
func (m Model) Distributed() bool { return m >= ResNet18 && m <= LM }

// Mode is a job's batch-size adaptation mode.
type Mode uint8

// The modes, as written in traces.
const (
	Static    Mode = iota + 1 // the batch size never changes
	Accordion                 // Accordion (MLSys '21): large batches outside critical regimes
	GNS                       // batch size doubles as the gradient noise scale grows
)

// String returns the mode as written in traces ("static", "accordion", "gns").
func (m Mode) String() string {
	switch m {
	case Static:
		return "static"
	case Accordion:
		return "accordion"
	case GNS:
		return "gns"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode returns the mode written s.
func ParseMode(s string) (Mode, bool) {
	for _, m := range []Mode{Static, Accordion, GNS} {
		if m.String() == s {
			return m, true
		}
	}
	return 0, false
}
