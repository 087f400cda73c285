//go:build (!amd64 && !wasip1) || purego || noasm

package kernels

func archImpls() []impl { return nil }

// forcePath does nothing: the generic path is the only one.
func forcePath(string) (restore func()) { return func() {} }
