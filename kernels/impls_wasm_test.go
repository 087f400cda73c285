//go:build wasip1 && !purego && !noasm

package kernels

// archImpls lists the host's kernels, reached through the imports.
func archImpls() []impl {
	return []impl{{name: "host", ok: true, excess: hostExcess, rotations: hostRotations, path: true,
		excessSlack: hostExcessSlack, addRotated: hostAddRotated, foldDelta: hostFoldDelta, residues: hostResidues}}
}

// forcePath selects the imports ("host") or the generic path, and returns
// a function that restores the choice.
func forcePath(name string) (restore func()) {
	old := useImports
	useImports = name == "host"
	return func() { useImports = old }
}
