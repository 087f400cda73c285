// Command asm generates orrery's amd64 vector kernels with avo.
//
// It writes kernels/kernels_amd64.s and the Go declarations in
// kernels/stubs_amd64.go; both are committed. Regenerate with
//
//	cd asm && go generate ./...
//
// and check that nothing changed with ./check.sh (what CI runs).
//
// Every kernel works on exact integers and leans on one identity:
//
//	max(b + r - c, 0) = max(r, c - b) + (b - c)
//
// so a rotation score is sum_i max(r, c-b[i]) plus the per-call constant
// k = sum_i (b[i] - c), and the inner loop is one max (with the load folded
// in) and one add per vector. With 0 <= r, b, c <= MaxValue = 2^24-1 each term
// max(r, c-b) lies in [0, 2^24), so uint32 lanes add 256 terms before they
// must be widened to 64 bits.
package main

//go:generate go run . -out ../kernels/kernels_amd64.s -stubs ../kernels/stubs_amd64.go -pkg kernels

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/buildtags"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

const (
	// widenEvery is how many terms below 2^24 a uint32 lane may add.
	widenEvery = 256

	// acrossRegs2 and acrossRegs5 are the accumulator registers of one block
	// of the across-shift kernels (8 and 16 shifts per register): 12 leaves
	// AVX2 its last three registers for c, the broadcast and a temporary.
	acrossRegs2 = 12
	acrossRegs5 = 16

	// alongShifts2 and alongShifts5 are the shifts one pass of the along-i
	// kernels scores at once, sharing each reversed chunk of base.
	alongShifts2 = 8
	alongShifts5 = 16
)

func main() {
	Constraint(buildtags.Not("purego").ToConstraint())
	Constraint(buildtags.Not("noasm").ToConstraint())

	revIdx8, revIdx16, tailMask := constants()

	sumAVX2()
	sumAVX512()
	excessAVX2()
	excessAVX512()
	acrossAVX2()
	acrossAVX512()
	alongAVX2(revIdx8, tailMask)
	alongAVX512(revIdx16)
	excessSlack(isaAVX2)
	excessSlack(isaAVX512)
	addAVX2()
	foldDeltaAVX2()
	reverseAVX2(revIdx8)

	Generate()
}

// constants emits the lane-reversal permutations and the AVX2 tail-mask
// table (8 ones then 8 zeros; loading 8 lanes at offset 8-t keeps the low t).
func constants() (rev8, rev16, tailMask Mem) {
	rev8 = GLOBL("revidx8", RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(7-i))
	}
	rev16 = GLOBL("revidx16", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(15-i))
	}
	tailMask = GLOBL("tailmask8", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		v := uint32(0)
		if i < 8 {
			v = 0xffffffff
		}
		DATA(4*i, U32(v))
	}
	return rev8, rev16, tailMask
}

// minQ sets x = min(x, limit) for unsigned x.
func minQ(x Register, limit int) {
	t := GP64()
	MOVQ(U32(limit), t)
	CMPQ(x, t)
	CMOVQHI(t, x)
}

// hsumZX32 returns in a new GP register the sum of the eight uint32 lanes of
// the YMM register v, widened to 64 bits.
func hsumZX32(v VecVirtual) Register {
	lo, hi := YMM(), YMM()
	VPMOVZXDQ(v.AsX(), lo)
	x := XMM()
	VEXTRACTI128(U8(1), v, x)
	VPMOVZXDQ(x, hi)
	VPADDQ(hi, lo, lo)
	return hsumQ256(lo, false)
}

// hsumQ256 returns in a new GP register the sum of the four uint64 lanes of v.
// In AVX-512 functions (evex) registers 16-31 may be allocated, which only
// EVEX encodings reach, so the extract is VEXTRACTI32X4 there.
func hsumQ256(v VecVirtual, evex bool) Register {
	x, y := XMM(), XMM()
	if evex {
		VEXTRACTI32X4(U8(1), v, x)
	} else {
		VEXTRACTI128(U8(1), v, x)
	}
	VPADDQ(x, v.AsX(), x)
	VPSHUFD(U8(0x4e), x, y)
	VPADDQ(y, x, x)
	r := GP64()
	VMOVQ(x, r)
	return r
}

// hsumZX32x16 is hsumZX32 for the sixteen lanes of a ZMM register.
func hsumZX32x16(v VecVirtual) Register {
	lo, hi := ZMM(), ZMM()
	VPMOVZXDQ(v.AsY(), lo)
	y := YMM()
	VEXTRACTI64X4(U8(1), v, y)
	VPMOVZXDQ(y, hi)
	VPADDQ(hi, lo, lo)
	s := YMM()
	VEXTRACTI64X4(U8(1), lo, s)
	VPADDQ(s, lo.AsY(), s)
	return hsumQ256(s, true)
}

// broadcastParam32 broadcasts the int32 parameter name to every lane of v.
// (It goes through a GP register: vet's asmdecl rejects a 4-byte
// VPBROADCASTD straight from the argument frame.)
func broadcastParam32(name string, v VecVirtual) {
	r, x := GP32(), XMM()
	Load(Param(name), r)
	VMOVD(r, x)
	VPBROADCASTD(x, v)
}

// broadcastParam64 broadcasts the int64 parameter name to every lane of v.
func broadcastParam64(name string, v VecVirtual) {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	VPBROADCASTQ(b.Addr, v)
}

// maskLow sets the opmask k to the low n bits (n < 64), using BMI2.
func maskLow(k Register, n Register) {
	ones, t := GP64(), GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(n, ones, t)
	KMOVW(t.As32(), k)
}

func sumAVX2() {
	TEXT("sumAVX2", NOSPLIT, "func(a []int32) int64")
	Pragma("noescape")
	Doc(
		"sumAVX2 returns the sum of a, whose values lie in [0, 2^24):",
		"",
		"\tfor _, x := range a {",
		"\t\tsum += int64(x)",
		"\t}",
	)
	p := Load(Param("a").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	acc64 := YMM()
	VPXOR(acc64, acc64, acc64)
	sum := GP64()
	XORQ(sum, sum)

	Label("sum2_chunk")
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(3), cnt)
	JZ(LabelRef("sum2_tail"))
	minQ(cnt, widenEvery)
	t := GP64()
	MOVQ(cnt, t)
	SHLQ(U8(3), t)
	SUBQ(t, n)
	acc := YMM()
	VPXOR(acc, acc, acc)
	Label("sum2_loop")
	VPADDD(Mem{Base: p}, acc, acc)
	ADDQ(U8(32), p)
	DECQ(cnt)
	JNZ(LabelRef("sum2_loop"))
	widen8(acc, acc64)
	JMP(LabelRef("sum2_chunk"))

	Label("sum2_tail")
	ANDQ(U8(7), n)
	JZ(LabelRef("sum2_done"))
	Label("sum2_tailloop")
	v := GP64()
	MOVLQSX(Mem{Base: p}, v)
	ADDQ(v, sum)
	ADDQ(U8(4), p)
	DECQ(n)
	JNZ(LabelRef("sum2_tailloop"))

	Label("sum2_done")
	ADDQ(hsumQ256(acc64, false), sum)
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	RET()
}

func sumAVX512() {
	TEXT("sumAVX512", NOSPLIT, "func(a []int32) int64")
	Pragma("noescape")
	Doc(
		"sumAVX512 returns the sum of a, whose values lie in [0, 2^24), with a",
		"masked tail (inside the slice when len(a) >= 16):",
		"",
		"\tfor _, x := range a {",
		"\t\tsum += int64(x)",
		"\t}",
	)
	beginZero()
	p := Load(Param("a").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	acc64 := ZMM()
	zeroZ(acc64)

	Label("sum5_chunk")
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(4), cnt)
	JZ(LabelRef("sum5_tail"))
	minQ(cnt, widenEvery)
	t := GP64()
	MOVQ(cnt, t)
	SHLQ(U8(4), t)
	SUBQ(t, n)
	acc := ZMM()
	zeroZ(acc)
	Label("sum5_loop")
	VPADDD(Mem{Base: p}, acc, acc)
	ADDQ(U8(64), p)
	DECQ(cnt)
	JNZ(LabelRef("sum5_loop"))
	widen16(acc, acc64)
	JMP(LabelRef("sum5_chunk"))

	Label("sum5_tail")
	TESTQ(n, n)
	JZ(LabelRef("sum5_done"))
	k := K()
	tailMask16(k, n, Load(Param("a").Len(), GP64()), []Register{p}, "sum5_tail")
	v := ZMM()
	VMOVDQU32_Z(Mem{Base: p}, k, v)
	widen16(v, acc64)

	Label("sum5_done")
	s := YMM()
	VEXTRACTI64X4(U8(1), acc64, s)
	VPADDQ(s, acc64.AsY(), s)
	sum := hsumQ256(s, true)
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	RET()
}

// tailMask16 prepares an AVX-512 tail of t < 16 elements at the pointers ps,
// in a slice of total elements. If total >= 16 it moves each pointer back
// 16-t elements, so that a full vector ends at the slice end, and sets k to
// the high t lanes: every lane then lies inside the slice, and no masked-off
// lane reaches a page that may not be mapped (which costs a microcode assist
// per load even though it cannot fault). Otherwise it leaves the pointers
// and sets k to the low t lanes.
func tailMask16(k Register, t, total Register, ps []Register, pre string) {
	lm, ones := GP64(), GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(t, ones, lm)
	CMPQ(total, U8(16))
	JB(LabelRef(pre + "_short"))
	sh := GP64()
	MOVQ(U32(16), sh)
	SUBQ(t, sh)
	SHLXQ(sh, lm, lm)
	NEGQ(sh)
	for _, p := range ps {
		LEAQ(Mem{Base: p, Index: sh, Scale: 4}, p)
	}
	Label(pre + "_short")
	KMOVW(lm.As32(), k)
}

// zmmZero holds zero in the AVX-512 function being generated; see zeroZ.
var zmmZero VecVirtual

// beginZero sets zmmZero at the top of an AVX-512 function. avo treats
// VPXORD x, x, x as a read of x (unlike VEX VPXOR), which would keep every
// accumulator zeroed that way live across the whole function.
func beginZero() {
	zmmZero = ZMM()
	VPXORD(zmmZero, zmmZero, zmmZero)
}

// zeroZ sets the ZMM register v to zero.
func zeroZ(v VecVirtual) { VMOVDQA64(zmmZero, v) }

// widen16 adds the sixteen uint32 lanes of v, zero-extended, into the eight
// uint64 lanes of acc.
func widen16(v, acc VecVirtual) {
	lo, hi := ZMM(), ZMM()
	y := YMM()
	VPMOVZXDQ(v.AsY(), lo)
	VEXTRACTI64X4(U8(1), v, y)
	VPMOVZXDQ(y, hi)
	VPADDQ(lo, acc, acc)
	VPADDQ(hi, acc, acc)
}

// widen8 adds the eight uint32 lanes of v, zero-extended, into the four
// uint64 lanes of acc.
func widen8(v, acc VecVirtual) {
	lo, hi := YMM(), YMM()
	x := XMM()
	VPMOVZXDQ(v.AsX(), lo)
	VEXTRACTI128(U8(1), v, x)
	VPMOVZXDQ(x, hi)
	VPADDQ(lo, acc, acc)
	VPADDQ(hi, acc, acc)
}

const excessDoc = `returns the excess of a+b over c (len(b) >= len(a),
values and c in [0, 2^24)):

	for i := range a {
		sum += int64(max(a[i]+b[i]-c, 0))
	}

It sums max(a[i]+b[i], c) in uint32 lanes (each term below 2^25, so 128 per
lane before widening) and subtracts len(a)*c.`

func docLines(name, text string) {
	lines := []string{}
	cur := name + " "
	for _, r := range text {
		if r == '\n' {
			lines = append(lines, cur)
			cur = ""
			continue
		}
		cur += string(r)
	}
	lines = append(lines, cur)
	Doc(lines...)
}

func excessAVX2() {
	const unroll = 4
	TEXT("excessAVX2", NOSPLIT, "func(a, b []int32, c int32) int64")
	Pragma("noescape")
	docLines("excessAVX2", excessDoc)
	pa := Load(Param("a").Base(), GP64())
	pb := Load(Param("b").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	cv := YMM()
	broadcastParam32("c", cv)
	acc64 := YMM()
	VPXOR(acc64, acc64, acc64)

	// Blocks of 32 values in 4 accumulators, widened every 128 blocks.
	Label("ex2_chunk")
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(5), cnt)
	JZ(LabelRef("ex2_eight"))
	minQ(cnt, 128)
	t := GP64()
	MOVQ(cnt, t)
	SHLQ(U8(5), t)
	SUBQ(t, n)
	acc := make([]VecVirtual, unroll)
	for j := range acc {
		acc[j] = YMM()
		VPXOR(acc[j], acc[j], acc[j])
	}
	Label("ex2_loop")
	for j := range acc {
		v := YMM()
		VMOVDQU(Mem{Base: pa, Disp: 32 * j}, v)
		VPADDD(Mem{Base: pb, Disp: 32 * j}, v, v)
		VPMAXSD(cv, v, v)
		VPADDD(v, acc[j], acc[j])
	}
	ADDQ(U8(32*unroll), pa)
	ADDQ(U8(32*unroll), pb)
	DECQ(cnt)
	JNZ(LabelRef("ex2_loop"))
	for j := range acc {
		widen8(acc[j], acc64)
	}
	JMP(LabelRef("ex2_chunk"))

	// Up to three blocks of 8.
	Label("ex2_eight")
	acc8 := YMM()
	VPXOR(acc8, acc8, acc8)
	Label("ex2_eightloop")
	CMPQ(n, U8(8))
	JB(LabelRef("ex2_tail"))
	v := YMM()
	VMOVDQU(Mem{Base: pa}, v)
	VPADDD(Mem{Base: pb}, v, v)
	VPMAXSD(cv, v, v)
	VPADDD(v, acc8, acc8)
	ADDQ(U8(32), pa)
	ADDQ(U8(32), pb)
	SUBQ(U8(8), n)
	JMP(LabelRef("ex2_eightloop"))

	// Scalar tail of fewer than 8 values.
	Label("ex2_tail")
	widen8(acc8, acc64)
	sum := hsumQ256(acc64, false)
	// sum holds sum max(a+b, c) over the vector part; subtract c for each.
	c := GP64()
	Load(Param("c"), c)
	MOVLQSX(c.As32(), c)
	nv := Load(Param("a").Len(), GP64())
	SUBQ(n, nv)
	IMULQ(c, nv)
	SUBQ(nv, sum)
	TESTQ(n, n)
	JZ(LabelRef("ex2_done"))
	Label("ex2_tailloop")
	x := GP32()
	MOVL(Mem{Base: pa}, x)
	ADDL(Mem{Base: pb}, x)
	SUBL(c.As32(), x)
	z := GP32()
	XORL(z, z)
	CMPL(x, z)
	CMOVLLT(z, x)
	xq := GP64()
	MOVLQSX(x, xq)
	ADDQ(xq, sum)
	ADDQ(U8(4), pa)
	ADDQ(U8(4), pb)
	DECQ(n)
	JNZ(LabelRef("ex2_tailloop"))

	Label("ex2_done")
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	RET()
}

func excessAVX512() {
	const unroll = 4
	TEXT("excessAVX512", NOSPLIT, "func(a, b []int32, c int32) int64")
	Pragma("noescape")
	docLines("excessAVX512", excessDoc+"\nThe tail is masked (and inside the slices when len(a) >= 16).")
	beginZero()
	pa := Load(Param("a").Base(), GP64())
	pb := Load(Param("b").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	cv := ZMM()
	broadcastParam32("c", cv)
	acc64 := ZMM()
	zeroZ(acc64)

	// Blocks of 64 values in 4 accumulators, widened every 128 blocks.
	Label("ex5_chunk")
	cnt := GP64()
	MOVQ(n, cnt)
	SHRQ(U8(6), cnt)
	JZ(LabelRef("ex5_sixteen"))
	minQ(cnt, 128)
	t := GP64()
	MOVQ(cnt, t)
	SHLQ(U8(6), t)
	SUBQ(t, n)
	acc := make([]VecVirtual, unroll)
	for j := range acc {
		acc[j] = ZMM()
		zeroZ(acc[j])
	}
	Label("ex5_loop")
	for j := range acc {
		v := ZMM()
		VMOVDQU32(Mem{Base: pa, Disp: 64 * j}, v)
		VPADDD(Mem{Base: pb, Disp: 64 * j}, v, v)
		VPMAXSD(cv, v, v)
		VPADDD(v, acc[j], acc[j])
	}
	ADDQ(U32(64*unroll), pa)
	ADDQ(U32(64*unroll), pb)
	DECQ(cnt)
	JNZ(LabelRef("ex5_loop"))
	for j := range acc {
		widen16(acc[j], acc64)
	}
	JMP(LabelRef("ex5_chunk"))

	// Up to three blocks of 16, then one masked block.
	Label("ex5_sixteen")
	acc16 := ZMM()
	zeroZ(acc16)
	Label("ex5_sixteenloop")
	CMPQ(n, U8(16))
	JB(LabelRef("ex5_tail"))
	v := ZMM()
	VMOVDQU32(Mem{Base: pa}, v)
	VPADDD(Mem{Base: pb}, v, v)
	VPMAXSD(cv, v, v)
	VPADDD(v, acc16, acc16)
	ADDQ(U8(64), pa)
	ADDQ(U8(64), pb)
	SUBQ(U8(16), n)
	JMP(LabelRef("ex5_sixteenloop"))

	Label("ex5_tail")
	TESTQ(n, n)
	JZ(LabelRef("ex5_reduce"))
	k := K()
	tailMask16(k, n, Load(Param("a").Len(), GP64()), []Register{pa, pb}, "ex5_tail")
	w := ZMM()
	VMOVDQU32_Z(Mem{Base: pa}, k, w)
	VPADDD_Z(Mem{Base: pb}, w, k, w)
	VPMAXSD(cv, w, w)
	VPADDD(w, acc16, k, acc16) // merge-masked: inactive lanes add nothing

	Label("ex5_reduce")
	widen16(acc16, acc64)
	s := YMM()
	VEXTRACTI64X4(U8(1), acc64, s)
	VPADDQ(s, acc64.AsY(), s)
	sum := hsumQ256(s, true)
	c := GP64()
	Load(Param("c"), c)
	MOVLQSX(c.As32(), c)
	nv := Load(Param("a").Len(), GP64())
	IMULQ(c, nv)
	SUBQ(nv, sum)
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	RET()
}

const rotationsDoc = `scores the shifts s0 .. s0+len(dst)-1 of a rotation search
(0 <= s0, s0+len(dst) <= n = len(base), len(rotor) >= %s, values and c
in [0, 2^24)); k must be sum(base) - n*c:

	for j := range dst {
		dst[j] = k
		for i := range base {
			dst[j] += int64(max(rotor[s0+j+n-i], c-base[i]))
		}
	}

which is the excess sum_i max(base[i]+rot[(i-s)%%n]-c, 0) for s = s0+j.
%s`

func acrossAVX2() {
	const R = acrossRegs2
	const W = 8 * R
	TEXT("acrossAVX2", 0, "func(dst []int64, base, rotor []int32, c int32, s0 int, k int64)")
	Pragma("noescape")
	docLines("acrossAVX2", fmt.Sprintf(rotationsDoc, "2n+7", fmt.Sprintf(
		`It vectorizes across shifts: blocks of up to %d shifts in %d registers,
one broadcast of c-base[i] per i against consecutive rotor entries. Lanes
past len(dst) read rotor padding and are not stored.`, W, R)))
	scratch := AllocLocal(8 * W)
	dp := Load(Param("dst").Base(), GP64())
	m := Load(Param("dst").Len(), GP64())
	bp0 := Load(Param("base").Base(), GP64())
	n := Load(Param("base").Len(), GP64())
	rp := Load(Param("rotor").Base(), GP64())
	s0 := Load(Param("s0"), GP64())
	// rp = &rotor[s0+n], the window of shift s0 at i = 0.
	ADDQ(n, s0)
	LEAQ(Mem{Base: rp, Index: s0, Scale: 4}, rp)

	Label("ac2_block")
	TESTQ(m, m)
	JZ(LabelRef("ac2_done"))
	CMPQ(m, U8(W))
	JAE(LabelRef(fmt.Sprintf("ac2_body%d", R)))
	for r := 1; r < R; r++ {
		CMPQ(m, U8(8*r))
		JBE(LabelRef(fmt.Sprintf("ac2_body%d", r)))
	}
	JMP(LabelRef(fmt.Sprintf("ac2_body%d", R)))

	for r := 1; r <= R; r++ {
		Label(fmt.Sprintf("ac2_body%d", r))
		acrossBodyAVX2(r, scratch, dp, m, bp0, n, rp)
		JMP(LabelRef("ac2_block"))
	}

	Label("ac2_done")
	VZEROUPPER()
	RET()
}

// acrossBodyAVX2 scores min(m, 8r) shifts starting at the window rp into dp,
// then advances dp, rp and m.
func acrossBodyAVX2(r int, scratch Mem, dp, m, bp0, n, rp Register) {
	pre := fmt.Sprintf("ac2_%d_", r)
	kv := YMM()
	broadcastParam64("k", kv)
	for j := 0; j < 2*r; j++ {
		VMOVDQU(kv, scratch.Offset(32*j))
	}
	cv := YMM()
	broadcastParam32("c", cv)
	bp, wp, left := GP64(), GP64(), GP64()
	MOVQ(bp0, bp)
	MOVQ(rp, wp)
	MOVQ(n, left)

	Label(pre + "chunk")
	cnt := GP64()
	MOVQ(left, cnt)
	minQ(cnt, widenEvery)
	SUBQ(cnt, left)
	acc := make([]VecVirtual, r)
	for j := range acc {
		acc[j] = YMM()
		VPXOR(acc[j], acc[j], acc[j])
	}
	Label(pre + "loop")
	nb := YMM()
	VPBROADCASTD(Mem{Base: bp}, nb)
	VPSUBD(nb, cv, nb)
	for j := range acc {
		t := YMM()
		VPMAXSD(Mem{Base: wp, Disp: 32 * j}, nb, t)
		VPADDD(t, acc[j], acc[j])
	}
	ADDQ(U8(4), bp)
	SUBQ(U8(4), wp)
	DECQ(cnt)
	JNZ(LabelRef(pre + "loop"))
	for j := range acc {
		lo, hi := YMM(), YMM()
		x := XMM()
		VPMOVZXDQ(acc[j].AsX(), lo)
		VEXTRACTI128(U8(1), acc[j], x)
		VPMOVZXDQ(x, hi)
		VPADDQ(scratch.Offset(64*j), lo, lo)
		VPADDQ(scratch.Offset(64*j+32), hi, hi)
		VMOVDQU(lo, scratch.Offset(64*j))
		VMOVDQU(hi, scratch.Offset(64*j+32))
	}
	TESTQ(left, left)
	JNZ(LabelRef(pre + "chunk"))

	// Copy min(m, 8r) scores out: four at a time, then one at a time.
	w := GP64()
	MOVQ(m, w)
	minQ(w, 8*r)
	SUBQ(w, m)
	ADDQ(U32(32*r), rp)
	idx := GP64()
	XORQ(idx, idx)
	Label(pre + "copy4")
	rest := GP64()
	MOVQ(w, rest)
	SUBQ(idx, rest)
	CMPQ(rest, U8(4))
	JB(LabelRef(pre + "copy1"))
	v := YMM()
	VMOVDQU(scratch.Idx(idx, 8), v)
	VMOVDQU(v, Mem{Base: dp, Index: idx, Scale: 8})
	ADDQ(U8(4), idx)
	JMP(LabelRef(pre + "copy4"))
	Label(pre + "copy1")
	CMPQ(idx, w)
	JAE(LabelRef(pre + "copied"))
	q := GP64()
	MOVQ(scratch.Idx(idx, 8), q)
	MOVQ(q, Mem{Base: dp, Index: idx, Scale: 8})
	INCQ(idx)
	JMP(LabelRef(pre + "copy1"))
	Label(pre + "copied")
	LEAQ(Mem{Base: dp, Index: w, Scale: 8}, dp)
}

func acrossAVX512() {
	const R = acrossRegs5
	const W = 16 * R
	TEXT("acrossAVX512", NOSPLIT, "func(dst []int64, base, rotor []int32, c int32, s0 int, k int64)")
	Pragma("noescape")
	docLines("acrossAVX512", fmt.Sprintf(rotationsDoc, "2n", fmt.Sprintf(
		`It vectorizes across shifts: blocks of up to %d shifts in %d registers,
one broadcast of c-base[i] per i against consecutive rotor entries, and dst
doubles as the 64-bit accumulator. The last register of a block is placed
to end at the block's last shift (overlapping the register or block before
it) and masked when added into dst, so every load and store stays inside
the slices; only with len(dst) < 16 is it masked at the slices' ends.`, W, R)))
	beginZero()
	dp := Load(Param("dst").Base(), GP64())
	m := Load(Param("dst").Len(), GP64())
	bp0 := Load(Param("base").Base(), GP64())
	n := Load(Param("base").Len(), GP64())
	rp := Load(Param("rotor").Base(), GP64())
	s0 := Load(Param("s0"), GP64())
	ADDQ(n, s0)
	LEAQ(Mem{Base: rp, Index: s0, Scale: 4}, rp)
	CMPQ(m, U8(16))
	JB(LabelRef("ac5_short"))

	Label("ac5_block")
	TESTQ(m, m)
	JZ(LabelRef("ac5_done"))
	CMPQ(m, U32(W))
	JAE(LabelRef(fmt.Sprintf("ac5_body%d", R)))
	for r := 1; r < R; r++ {
		CMPQ(m, U32(16*r))
		JBE(LabelRef(fmt.Sprintf("ac5_body%d", r)))
	}
	JMP(LabelRef(fmt.Sprintf("ac5_body%d", R)))

	for r := 1; r <= R; r++ {
		Label(fmt.Sprintf("ac5_body%d", r))
		acrossBodyAVX512(r, true, dp, m, bp0, n, rp)
		JMP(LabelRef("ac5_block"))
	}

	// Fewer than 16 shifts in all: one register masked at the ends of dst
	// (the rotor reads stay inside its padding).
	Label("ac5_short")
	TESTQ(m, m)
	JZ(LabelRef("ac5_done"))
	acrossBodyAVX512(1, false, dp, m, bp0, n, rp)

	Label("ac5_done")
	VZEROUPPER()
	RET()
}

// acrossBodyAVX512 scores w = min(m, 16r) shifts starting at the window rp
// into dp, then advances dp, rp and m. With overlap (which needs 16 valid
// shifts ending at the block's end) the last register covers the 16 shifts
// ending at w and adds only the ones no other register covers; without, it
// starts at 16(r-1) and masks the lanes past w.
func acrossBodyAVX512(r int, overlap bool, dp, m, bp0, n, rp Register) {
	pre := fmt.Sprintf("ac5_%d_", r)
	if !overlap {
		pre = "ac5_short_"
	}
	// w lanes are live; the last register brings w-16(r-1) new ones.
	w := GP64()
	MOVQ(m, w)
	minQ(w, 16*r)
	last := GP64()
	LEAQ(Mem{Base: w, Disp: -16 * (r - 1)}, last)
	// kl masks the last register's new lanes; its low 8 bits (kl itself) and
	// khi mask the two halves once widened to int64. off is the last
	// register's lane offset from the block start, times 4 (a byte offset
	// into the rotor; times 8 into dst).
	kl, khi, kfull := K(), K(), K()
	off := GP64()
	if overlap {
		lm, sh := GP64(), GP64()
		ones := GP64()
		MOVQ(I32(-1), ones)
		BZHIQ(last, ones, lm)
		MOVQ(U32(16), sh)
		SUBQ(last, sh)
		SHLXQ(sh, lm, lm) // the high `last` lanes
		KMOVW(lm.As32(), kl)
		LEAQ(Mem{Base: w, Disp: -16}, off)
		SHLQ(U8(2), off)
	} else {
		maskLow(kl, last)
		MOVQ(U32(64*(r-1)), off)
	}
	KSHIFTRW(U8(8), kl, khi)
	t := GP32()
	MOVL(U32(0xff), t)
	KMOVW(t, kfull)
	lastDst := Mem{Base: dp, Index: off, Scale: 2}
	lastWin := func(wp Register) Mem { return Mem{Base: wp, Index: off, Scale: 1} }

	kv := ZMM()
	broadcastParam64("k", kv)
	for j := 0; j < r-1; j++ {
		VMOVDQU64(kv, Mem{Base: dp, Disp: 128 * j})
		VMOVDQU64(kv, Mem{Base: dp, Disp: 128*j + 64})
	}
	VMOVDQU64(kv, kl, lastDst)
	VMOVDQU64(kv, khi, lastDst.Offset(64))

	cv := ZMM()
	broadcastParam32("c", cv)
	bp, wp, left := GP64(), GP64(), GP64()
	MOVQ(bp0, bp)
	MOVQ(rp, wp)
	MOVQ(n, left)

	Label(pre + "chunk")
	cnt := GP64()
	MOVQ(left, cnt)
	minQ(cnt, widenEvery)
	SUBQ(cnt, left)
	acc := make([]VecVirtual, r)
	for j := range acc {
		acc[j] = ZMM()
		zeroZ(acc[j])
	}
	Label(pre + "loop")
	nb := ZMM()
	VPBROADCASTD(Mem{Base: bp}, nb)
	VPSUBD(nb, cv, nb)
	for j := range acc {
		x := ZMM()
		switch {
		case j < r-1:
			VPMAXSD(Mem{Base: wp, Disp: 64 * j}, nb, x)
		case overlap:
			VPMAXSD(lastWin(wp), nb, x) // every lane inside the rotor
		default:
			VPMAXSD_Z(lastWin(wp), nb, kl, x)
		}
		VPADDD(x, acc[j], acc[j])
	}
	ADDQ(U8(4), bp)
	SUBQ(U8(4), wp)
	DECQ(cnt)
	JNZ(LabelRef(pre + "loop"))
	for j := range acc {
		lo, hi := ZMM(), ZMM()
		y := YMM()
		VPMOVZXDQ(acc[j].AsY(), lo)
		VEXTRACTI64X4(U8(1), acc[j], y)
		VPMOVZXDQ(y, hi)
		mlo, mhi := kfull, kfull
		at := Mem{Base: dp, Disp: 128 * j}
		if j == r-1 {
			mlo, mhi, at = kl, khi, lastDst
		}
		VPADDQ_Z(at, lo, mlo, lo)
		VPADDQ_Z(at.Offset(64), hi, mhi, hi)
		VMOVDQU64(lo, mlo, at)
		VMOVDQU64(hi, mhi, at.Offset(64))
	}
	TESTQ(left, left)
	JNZ(LabelRef(pre + "chunk"))

	SUBQ(w, m)
	LEAQ(Mem{Base: dp, Index: w, Scale: 8}, dp)
	ADDQ(U32(64*r), rp)
}

func alongAVX2(rev, tailMask Mem) {
	const G = alongShifts2
	TEXT("alongAVX2", NOSPLIT, "func(dst []int64, base, rotor []int32, c int32, s0 int, k int64)")
	Pragma("noescape")
	docLines("alongAVX2", fmt.Sprintf(rotationsDoc, "2n", fmt.Sprintf(
		`It needs n >= 8 and vectorizes along i, for few shifts over a long circle:
each chunk of 8 base values is reversed once and scored against up to %d
shifts; the last chunk overlaps the one before and masks the overlap out.`, G)))
	dp := Load(Param("dst").Base(), GP64())
	m := Load(Param("dst").Len(), GP64())
	n := Load(Param("base").Len(), GP64())
	rp := Load(Param("rotor").Base(), GP64())
	s0 := Load(Param("s0"), GP64())
	// rp = &rotor[s0+n-7]: the reversed partner of base[0:8] for shift s0.
	ADDQ(n, s0)
	LEAQ(Mem{Base: rp, Index: s0, Scale: 4, Disp: -28}, rp)

	Label("al2_group")
	TESTQ(m, m)
	JZ(LabelRef("al2_done"))
	CMPQ(m, U8(G))
	JAE(LabelRef(fmt.Sprintf("al2_body%d", G)))
	for g := 1; g < G; g++ {
		CMPQ(m, U8(g))
		JE(LabelRef(fmt.Sprintf("al2_body%d", g)))
	}
	for g := 1; g <= G; g++ {
		Label(fmt.Sprintf("al2_body%d", g))
		alongBodyAVX2(g, rev, tailMask, dp, n, rp)
		ADDQ(U8(8*g), dp)
		ADDQ(U8(4*g), rp)
		SUBQ(U8(g), m)
		JMP(LabelRef("al2_group"))
	}

	Label("al2_done")
	VZEROUPPER()
	RET()
}

// alongBodyAVX2 scores the g shifts whose windows start at rp into dp.
func alongBodyAVX2(g int, rev, tailMask Mem, dp, n, rp Register) {
	pre := fmt.Sprintf("al2_%d_", g)
	k := Load(Param("k"), GP64())
	for j := 0; j < g; j++ {
		MOVQ(k, Mem{Base: dp, Disp: 8 * j})
	}
	cv, rv := YMM(), YMM()
	broadcastParam32("c", cv)
	VMOVDQU(rev, rv)
	bp := Load(Param("base").Base(), GP64())
	wp, left := GP64(), GP64()
	MOVQ(rp, wp)
	MOVQ(n, left)
	SHRQ(U8(3), left)

	Label(pre + "chunk")
	cnt := GP64()
	MOVQ(left, cnt)
	minQ(cnt, widenEvery-1) // leaves room for the tail chunk
	SUBQ(cnt, left)
	acc := make([]VecVirtual, g)
	for j := range acc {
		acc[j] = YMM()
		VPXOR(acc[j], acc[j], acc[j])
	}
	Label(pre + "loop")
	nb := YMM()
	VPERMD(Mem{Base: bp}, rv, nb)
	VPSUBD(nb, cv, nb)
	for j := range acc {
		t := YMM()
		VPMAXSD(Mem{Base: wp, Disp: 4 * j}, nb, t)
		VPADDD(t, acc[j], acc[j])
	}
	ADDQ(U8(32), bp)
	SUBQ(U8(32), wp)
	DECQ(cnt)
	JNZ(LabelRef(pre + "loop"))

	TESTQ(left, left)
	JNZ(LabelRef(pre + "widen"))
	// The last, partial chunk: base[n-8:n] against rotor[s+1:s+9], with the
	// lanes the full chunks already covered masked out.
	t := GP64()
	MOVQ(n, t)
	ANDQ(U8(7), t)
	JZ(LabelRef(pre + "widen"))
	LEAQ(Mem{Base: bp, Index: t, Scale: 4, Disp: -32}, bp) // &base[n-8]
	NEGQ(t)
	tm := GP64()
	LEAQ(tailMask, tm)
	LEAQ(Mem{Base: tm, Index: t, Scale: 4, Disp: 32}, tm) // &tailmask8[8-t]
	LEAQ(Mem{Base: wp, Index: t, Scale: 4, Disp: 32}, wp) // &rotor[s+1]
	nt := YMM()
	VPERMD(Mem{Base: bp}, rv, nt)
	VPSUBD(nt, cv, nt)
	for j := range acc {
		u := YMM()
		VPMAXSD(Mem{Base: wp, Disp: 4 * j}, nt, u)
		VPAND(Mem{Base: tm}, u, u)
		VPADDD(u, acc[j], acc[j])
	}

	Label(pre + "widen")
	for j := range acc {
		ADDQ(hsumZX32(acc[j]), Mem{Base: dp, Disp: 8 * j})
	}
	TESTQ(left, left)
	JNZ(LabelRef(pre + "chunk"))
}

func alongAVX512(rev Mem) {
	const G = alongShifts5
	TEXT("alongAVX512", NOSPLIT, "func(dst []int64, base, rotor []int32, c int32, s0 int, k int64)")
	Pragma("noescape")
	docLines("alongAVX512", fmt.Sprintf(rotationsDoc, "2n", fmt.Sprintf(
		`It vectorizes along i, for few shifts over a long circle: each chunk of 16
base values is reversed once and scored against up to %d shifts. The last
chunk is masked; with n >= 16 it overlaps the one before, so every lane
lies inside the slices.`, G)))
	beginZero()
	dp := Load(Param("dst").Base(), GP64())
	m := Load(Param("dst").Len(), GP64())
	n := Load(Param("base").Len(), GP64())
	rp := Load(Param("rotor").Base(), GP64())
	s0 := Load(Param("s0"), GP64())
	// rp = &rotor[s0+n-15]: the reversed partner of base[0:16] for shift s0
	// (below rotor[0] when n < 15; only masked lanes see those addresses).
	ADDQ(n, s0)
	LEAQ(Mem{Base: rp, Index: s0, Scale: 4, Disp: -60}, rp)

	Label("al5_group")
	TESTQ(m, m)
	JZ(LabelRef("al5_done"))
	CMPQ(m, U8(G))
	JAE(LabelRef(fmt.Sprintf("al5_body%d", G)))
	for g := 1; g < G; g++ {
		CMPQ(m, U8(g))
		JE(LabelRef(fmt.Sprintf("al5_body%d", g)))
	}
	for g := 1; g <= G; g++ {
		Label(fmt.Sprintf("al5_body%d", g))
		alongBodyAVX512(g, rev, dp, n, rp)
		ADDQ(U8(8*g), dp)
		ADDQ(U8(4*g), rp)
		SUBQ(U8(g), m)
		JMP(LabelRef("al5_group"))
	}

	Label("al5_done")
	VZEROUPPER()
	RET()
}

// alongBodyAVX512 scores the g shifts whose windows start at rp into dp.
func alongBodyAVX512(g int, rev Mem, dp, n, rp Register) {
	pre := fmt.Sprintf("al5_%d_", g)
	k := Load(Param("k"), GP64())
	for j := 0; j < g; j++ {
		MOVQ(k, Mem{Base: dp, Disp: 8 * j})
	}
	cv, rv := ZMM(), ZMM()
	broadcastParam32("c", cv)
	VMOVDQU32(rev, rv)
	bp := Load(Param("base").Base(), GP64())
	wp, left := GP64(), GP64()
	MOVQ(rp, wp)
	MOVQ(n, left)
	SHRQ(U8(4), left)

	Label(pre + "chunk")
	cnt := GP64()
	MOVQ(left, cnt)
	minQ(cnt, widenEvery-1) // leaves room for the tail chunk
	SUBQ(cnt, left)
	acc := make([]VecVirtual, g)
	for j := range acc {
		acc[j] = ZMM()
		zeroZ(acc[j])
	}
	TESTQ(cnt, cnt)
	JZ(LabelRef(pre + "tail"))
	Label(pre + "loop")
	nb := ZMM()
	VPERMD(Mem{Base: bp}, rv, nb)
	VPSUBD(nb, cv, nb)
	for j := range acc {
		t := ZMM()
		VPMAXSD(Mem{Base: wp, Disp: 4 * j}, nb, t)
		VPADDD(t, acc[j], acc[j])
	}
	ADDQ(U8(64), bp)
	SUBQ(U8(64), wp)
	DECQ(cnt)
	JNZ(LabelRef(pre + "loop"))

	Label(pre + "tail")
	TESTQ(left, left)
	JNZ(LabelRef(pre + "widen"))
	// The last t = n%16 values. With n >= 16: the full chunk base[n-16:n]
	// against rotor[s+1:s+17], its new values in base lanes [16-t, 16) and,
	// reversed, in lanes [0, t); every lane lies inside the slices. With
	// n < 16: base lanes [0, t) reversed into [16-t, 16), masked at the
	// slices' ends.
	t := GP64()
	MOVQ(n, t)
	ANDQ(U8(15), t)
	JZ(LabelRef(pre + "widen"))
	kb, kr := K(), K()
	lm, hm, sh := GP64(), GP64(), GP64()
	ones := GP64()
	MOVQ(I32(-1), ones)
	BZHIQ(t, ones, lm)
	MOVQ(U32(16), sh)
	SUBQ(t, sh)
	SHLXQ(sh, lm, hm)
	CMPQ(n, U8(16))
	JB(LabelRef(pre + "short"))
	LEAQ(Mem{Base: wp, Index: sh, Scale: 4}, wp)
	NEGQ(sh)
	LEAQ(Mem{Base: bp, Index: sh, Scale: 4}, bp)
	KMOVW(hm.As32(), kb)
	KMOVW(lm.As32(), kr)
	JMP(LabelRef(pre + "masked"))
	Label(pre + "short")
	KMOVW(lm.As32(), kb)
	KMOVW(hm.As32(), kr)
	Label(pre + "masked")
	nt := ZMM()
	VMOVDQU32_Z(Mem{Base: bp}, kb, nt)
	VPERMD(nt, rv, nt)
	VPSUBD(nt, cv, nt)
	for j := range acc {
		u := ZMM()
		VPMAXSD_Z(Mem{Base: wp, Disp: 4 * j}, nt, kr, u)
		VPADDD(u, acc[j], acc[j])
	}

	Label(pre + "widen")
	for j := range acc {
		ADDQ(hsumZX32x16(acc[j]), Mem{Base: dp, Disp: 8 * j})
	}
	TESTQ(left, left)
	JNZ(LabelRef(pre + "chunk"))
}

const excessSlackDoc = `returns the excess of a over c and the room below it
(values and c in [0, 2^24)):

	for _, v := range a {
		excess += int64(max(v-c, 0))
		slack += int64(max(c-v, 0))
	}

Both come from two sums, M = sum max(v, c) and S = sum v (each term below
2^24, so 256 per uint32 lane before widening): excess = M - len(a)*c and
slack = M - S.`

// vecISA is what the ExcessSlack emitter needs of a vector width: AVX2's
// 8 lanes or AVX-512's 16.
type vecISA struct {
	name  string // the function's suffix and its labels' prefix
	lanes int
	reg   func() VecVirtual
	zero  func(v VecVirtual)
	load  func(m Mem, v VecVirtual)
	widen func(v, acc VecVirtual)     // uint32 lanes into uint64 lanes
	hsum  func(v VecVirtual) Register // uint64 lanes
	// tail adds the last n < lanes values at p into the M and S
	// accumulators (vector ones for AVX-512's masked block; AVX2 leaves
	// them to the scalar loop after the reduction and does nothing here).
	tail func(p, n Register, cv, am, as VecVirtual)
}

var (
	isaAVX2 = vecISA{
		name: "AVX2", lanes: 8, reg: YMM,
		zero:  func(v VecVirtual) { VPXOR(v, v, v) },
		load:  func(m Mem, v VecVirtual) { VMOVDQU(m, v) },
		widen: widen8,
		hsum:  func(v VecVirtual) Register { return hsumQ256(v, false) },
		tail:  func(p, n Register, cv, am, as VecVirtual) {},
	}
	isaAVX512 = vecISA{
		name: "AVX512", lanes: 16, reg: ZMM,
		zero:  zeroZ,
		load:  func(m Mem, v VecVirtual) { VMOVDQU32(m, v) },
		widen: widen16,
		hsum:  hsumQ512,
		tail: func(p, n Register, cv, am, as VecVirtual) {
			// Inactive lanes load as zero and are left out of the max's
			// sum by merge-masking.
			TESTQ(n, n)
			JZ(LabelRef("es5_reduce"))
			k := K()
			tailMask16(k, n, Load(Param("a").Len(), GP64()), []Register{p}, "es5_tail")
			x, y := ZMM(), ZMM()
			VMOVDQU32_Z(Mem{Base: p}, k, x)
			VPMAXSD(cv, x, y)
			VPADDD(y, am, k, am)
			VPADDD(x, as, as)
			XORQ(n, n)
			Label("es5_reduce")
		},
	}
)

// excessSlack emits ExcessSlack for one width: blocks of 2*lanes values
// in two pairs of accumulators (widened every 256 blocks), one block of
// lanes, the ISA's tail, then a scalar loop over what is left (AVX2's
// last values; nothing on AVX-512).
func excessSlack(isa vecISA) {
	name := "excessSlack" + isa.name
	pre := "es" + isa.name[3:4] // es2, es5
	TEXT(name, NOSPLIT, "func(a []int32, c int32) (excess, slack int64)")
	Pragma("noescape")
	doc := excessSlackDoc
	if isa.lanes == 16 {
		doc += "\nThe tail is masked (and inside the slice when len(a) >= 16)."
		beginZero()
	}
	docLines(name, doc)
	p := Load(Param("a").Base(), GP64())
	n := Load(Param("a").Len(), GP64())
	cv := isa.reg()
	broadcastParam32("c", cv)
	m64, s64 := isa.reg(), isa.reg()
	isa.zero(m64)
	isa.zero(s64)
	block := 4 * isa.lanes // bytes of one register's values

	Label(pre + "_chunk")
	cnt := GP64()
	MOVQ(n, cnt)
	shift := uint8(4)
	if isa.lanes == 16 {
		shift = 5
	}
	SHRQ(U8(shift), cnt)
	JZ(LabelRef(pre + "_one"))
	minQ(cnt, widenEvery)
	t := GP64()
	MOVQ(cnt, t)
	SHLQ(U8(shift), t)
	SUBQ(t, n)
	var am, as [2]VecVirtual
	for j := range am {
		am[j], as[j] = isa.reg(), isa.reg()
		isa.zero(am[j])
		isa.zero(as[j])
	}
	Label(pre + "_loop")
	for j := range am {
		v, w := isa.reg(), isa.reg()
		isa.load(Mem{Base: p, Disp: block * j}, v)
		VPMAXSD(cv, v, w)
		VPADDD(w, am[j], am[j])
		VPADDD(v, as[j], as[j])
	}
	ADDQ(U32(2*block), p)
	DECQ(cnt)
	JNZ(LabelRef(pre + "_loop"))
	for j := range am {
		isa.widen(am[j], m64)
		isa.widen(as[j], s64)
	}
	JMP(LabelRef(pre + "_chunk"))

	// At most one block of lanes is left, then the tail.
	Label(pre + "_one")
	am1, as1 := isa.reg(), isa.reg()
	isa.zero(am1)
	isa.zero(as1)
	CMPQ(n, U8(isa.lanes))
	JB(LabelRef(pre + "_tail"))
	v, w := isa.reg(), isa.reg()
	isa.load(Mem{Base: p}, v)
	VPMAXSD(cv, v, w)
	VPADDD(w, am1, am1)
	VPADDD(v, as1, as1)
	ADDQ(U8(block), p)
	SUBQ(U8(isa.lanes), n)
	Label(pre + "_tail")
	isa.tail(p, n, cv, am1, as1)
	isa.widen(am1, m64)
	isa.widen(as1, s64)
	msum, ssum := isa.hsum(m64), isa.hsum(s64)
	c := GP64()
	Load(Param("c"), c)
	MOVLQSX(c.As32(), c)

	// Scalar rest (n is zero here on AVX-512).
	TESTQ(n, n)
	JZ(LabelRef(pre + "_done"))
	Label(pre + "_scalar")
	x, y := GP64(), GP64()
	MOVLQSX(Mem{Base: p}, x)
	ADDQ(x, ssum)
	MOVQ(x, y)
	CMPQ(y, c)
	CMOVQLT(c, y)
	ADDQ(y, msum)
	ADDQ(U8(4), p)
	DECQ(n)
	JNZ(LabelRef(pre + "_scalar"))

	// excess = M - len(a)*c, slack = M - S.
	Label(pre + "_done")
	nc := Load(Param("a").Len(), GP64())
	IMULQ(c, nc)
	e := GP64()
	MOVQ(msum, e)
	SUBQ(nc, e)
	SUBQ(ssum, msum)
	VZEROUPPER()
	Store(e, ReturnIndex(0))
	Store(msum, ReturnIndex(1))
	RET()
}

// hsumQ512 returns in a new GP register the sum of the eight uint64 lanes of
// the ZMM register v.
func hsumQ512(v VecVirtual) Register {
	s := YMM()
	VEXTRACTI64X4(U8(1), v, s)
	VPADDQ(s, v.AsY(), s)
	return hsumQ256(s, true)
}

// addAVX2 emits dst[i] += src[i] for i < len(dst) (len(src) >= len(dst)):
// the straight runs of AddRotated, 32 values a step, then 8, then scalar.
func addAVX2() {
	TEXT("addAVX2", NOSPLIT, "func(dst, src []int32)")
	Pragma("noescape")
	Doc(
		"addAVX2 adds src to dst (len(src) >= len(dst)), wrapping as Go's int32",
		"addition does:",
		"",
		"\tfor i := range dst {",
		"\t\tdst[i] += src[i]",
		"\t}",
	)
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	Label("add2_block")
	CMPQ(n, U8(32))
	JB(LabelRef("add2_eight"))
	for j := range 4 {
		v := YMM()
		VMOVDQU(Mem{Base: s, Disp: 32 * j}, v)
		VPADDD(Mem{Base: d, Disp: 32 * j}, v, v)
		VMOVDQU(v, Mem{Base: d, Disp: 32 * j})
	}
	ADDQ(U8(128), d)
	ADDQ(U8(128), s)
	SUBQ(U8(32), n)
	JMP(LabelRef("add2_block"))
	Label("add2_eight")
	CMPQ(n, U8(8))
	JB(LabelRef("add2_tail"))
	v := YMM()
	VMOVDQU(Mem{Base: s}, v)
	VPADDD(Mem{Base: d}, v, v)
	VMOVDQU(v, Mem{Base: d})
	ADDQ(U8(32), d)
	ADDQ(U8(32), s)
	SUBQ(U8(8), n)
	JMP(LabelRef("add2_eight"))
	Label("add2_tail")
	TESTQ(n, n)
	JZ(LabelRef("add2_done"))
	Label("add2_tailloop")
	x := GP32()
	MOVL(Mem{Base: s}, x)
	ADDL(x, Mem{Base: d})
	ADDQ(U8(4), d)
	ADDQ(U8(4), s)
	DECQ(n)
	JNZ(LabelRef("add2_tailloop"))
	Label("add2_done")
	VZEROUPPER()
	RET()
}

// foldDeltaAVX2 emits FoldDelta: each run of m = len(psi) ticks of base
// (the last one shorter) adds its deltas to psi[0:run], 8 ticks a step
// widened to int64 in psi, then a scalar tail.
func foldDeltaAVX2() {
	TEXT("foldDeltaAVX2", NOSPLIT, "func(psi []int64, base []int32, v, c int32)")
	Pragma("noescape")
	Doc(
		"foldDeltaAVX2 adds to psi, folded modulo m = len(psi) >= 1, what v adds",
		"to the excess of base over c at each tick (values, v and c in [0, 2^24)):",
		"",
		"\tfor i, b := range base {",
		"\t\tpsi[i%m] += int64(max(b+v, c) - max(b, c))",
		"\t}",
		"",
		"Each run of m ticks is one pass over psi, 8 ticks a step.",
	)
	psi0 := Load(Param("psi").Base(), GP64())
	m := Load(Param("psi").Len(), GP64())
	b := Load(Param("base").Base(), GP64())
	n := Load(Param("base").Len(), GP64())
	vv, cv := YMM(), YMM()
	broadcastParam32("v", vv)
	broadcastParam32("c", cv)
	vs, cs := GP32(), GP32()
	Load(Param("v"), vs)
	Load(Param("c"), cs)

	Label("fd2_run")
	TESTQ(n, n)
	JZ(LabelRef("fd2_done"))
	run := GP64()
	MOVQ(m, run)
	CMPQ(n, m)
	CMOVQLT(n, run)
	SUBQ(run, n)
	q := GP64()
	MOVQ(psi0, q)

	Label("fd2_eight")
	CMPQ(run, U8(8))
	JB(LabelRef("fd2_tail"))
	x, y := YMM(), YMM()
	VMOVDQU(Mem{Base: b}, x)
	VPADDD(vv, x, y)
	VPMAXSD(cv, y, y)
	VPMAXSD(cv, x, x)
	VPSUBD(x, y, y) // deltas in [0, v]
	lo, hi := YMM(), YMM()
	VPMOVZXDQ(y.AsX(), lo)
	xh := XMM()
	VEXTRACTI128(U8(1), y, xh)
	VPMOVZXDQ(xh, hi)
	VPADDQ(Mem{Base: q}, lo, lo)
	VPADDQ(Mem{Base: q, Disp: 32}, hi, hi)
	VMOVDQU(lo, Mem{Base: q})
	VMOVDQU(hi, Mem{Base: q, Disp: 32})
	ADDQ(U8(32), b)
	ADDQ(U8(64), q)
	SUBQ(U8(8), run)
	JMP(LabelRef("fd2_eight"))

	Label("fd2_tail")
	TESTQ(run, run)
	JZ(LabelRef("fd2_run"))
	Label("fd2_tailloop")
	t, u := GP32(), GP32()
	MOVL(Mem{Base: b}, t)
	MOVL(t, u)
	ADDL(vs, u)
	CMPL(u, cs)
	CMOVLLT(cs, u)
	CMPL(t, cs)
	CMOVLLT(cs, t)
	SUBL(t, u)
	uq := GP64()
	MOVL(u, uq.As32()) // zero-extends
	ADDQ(uq, Mem{Base: q})
	ADDQ(U8(4), b)
	ADDQ(U8(8), q)
	DECQ(run)
	JNZ(LabelRef("fd2_tailloop"))
	JMP(LabelRef("fd2_run"))

	Label("fd2_done")
	VZEROUPPER()
	RET()
}

// reverseAVX2 emits dst[i] = src[len(src)-1-i] (len(src) = len(dst)):
// the reversed period of a rotor, 8 values a step through the lane-reversal
// permutation rev, then a scalar tail.
func reverseAVX2(rev Mem) {
	TEXT("reverseAVX2", NOSPLIT, "func(dst, src []int32)")
	Pragma("noescape")
	Doc(
		"reverseAVX2 writes src reversed into dst (len(src) = len(dst)):",
		"",
		"\tfor i := range dst {",
		"\t\tdst[i] = src[len(src)-1-i]",
		"\t}",
	)
	d := Load(Param("dst").Base(), GP64())
	s := Load(Param("src").Base(), GP64())
	n := Load(Param("dst").Len(), GP64())
	// s = &src[n]: each step reads the 8 values before it.
	LEAQ(Mem{Base: s, Index: n, Scale: 4}, s)
	rv := YMM()
	VMOVDQU(rev, rv)
	Label("rev2_eight")
	CMPQ(n, U8(8))
	JB(LabelRef("rev2_tail"))
	v := YMM()
	VPERMD(Mem{Base: s, Disp: -32}, rv, v)
	VMOVDQU(v, Mem{Base: d})
	ADDQ(U8(32), d)
	SUBQ(U8(32), s)
	SUBQ(U8(8), n)
	JMP(LabelRef("rev2_eight"))
	Label("rev2_tail")
	TESTQ(n, n)
	JZ(LabelRef("rev2_done"))
	Label("rev2_tailloop")
	x := GP32()
	MOVL(Mem{Base: s, Disp: -4}, x)
	MOVL(x, Mem{Base: d})
	ADDQ(U8(4), d)
	SUBQ(U8(4), s)
	DECQ(n)
	JNZ(LabelRef("rev2_tailloop"))
	Label("rev2_done")
	VZEROUPPER()
	RET()
}
