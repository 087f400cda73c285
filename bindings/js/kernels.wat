;; orrery's kernels in WebAssembly SIMD (128-bit), for hosts without native
;; ones (the JavaScript binding): excess, rotations, excess_slack,
;; add_rotated, fold_delta, residues, windows, place and below. The Go
;; module imports them as "orrery_kernels" (package kernels
;; documents the imports; the reference loops are the *Generic functions of
;; its generic.go, residues.go and windows.go), and this module runs them on the Go module's memory, imported as
;; ("orrery" "memory"). Exact integer arithmetic: the answers are the Go
;; kernels' bit for bit.
;;
;; Assemble with wabt (kernels.wasm is committed; .ci/simd-check.sh checks
;; that it is this file assembled):
;;
;;     wat2wasm kernels.wat -o kernels.wasm
;;
;; Values and thresholds lie in [0, 2^24). Both kernels use
;; max(b + r - c, 0) = max(r, c - b) + (b - c) (or max(a + b, c) - c) and
;; sum terms below 2^25 in u32 lanes, widened to i64 before they can wrap.
(module
  (import "orrery" "memory" (memory 0))

  ;; hsum returns the sum of v's four u32 lanes.
  (func $hsum (param $v v128) (result i64)
    (local $w v128)
    (local.set $w (i64x2.add (i64x2.extend_low_i32x4_u (local.get $v))
                             (i64x2.extend_high_i32x4_u (local.get $v))))
    (i64.add (i64x2.extract_lane 0 (local.get $w)) (i64x2.extract_lane 1 (local.get $w))))

  ;; excess(a, b, n, c) = sum_{i<n} max(a[i] + b[i] - c, 0): max(a+b, c)
  ;; in two accumulators of at most 64 terms a lane per block of 512, less
  ;; n*c.
  (func (export "excess") (param $a i32) (param $b i32) (param $n i32) (param $c i32) (result i64)
    (local $sum i64) (local $end i32) (local $n8 i32) (local $cv v128)
    (local $acc0 v128) (local $acc1 v128)
    (local.set $sum (i64.mul (i64.extend_i32_u (local.get $n)) (i64.sub (i64.const 0) (i64.extend_i32_u (local.get $c)))))
    (local.set $cv (i32x4.splat (local.get $c)))
    ;; from here on a, b advance and n8 and end are byte offsets into a
    (local.set $n8 (i32.add (local.get $a) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $a) (local.get $n8)))
        (local.set $end (i32.add (local.get $a) (i32.const 2048)))
        (if (i32.gt_u (local.get $end) (local.get $n8)) (then (local.set $end (local.get $n8))))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (loop $inner
          (local.set $acc0 (i32x4.add (local.get $acc0)
            (i32x4.max_s (i32x4.add (v128.load (local.get $a)) (v128.load (local.get $b))) (local.get $cv))))
          (local.set $acc1 (i32x4.add (local.get $acc1)
            (i32x4.max_s (i32x4.add (v128.load offset=16 (local.get $a)) (v128.load offset=16 (local.get $b))) (local.get $cv))))
          (local.set $a (i32.add (local.get $a) (i32.const 32)))
          (local.set $b (i32.add (local.get $b) (i32.const 32)))
          (br_if $inner (i32.lt_u (local.get $a) (local.get $end))))
        (local.set $sum (i64.add (local.get $sum)
          (i64.add (call $hsum (local.get $acc0)) (call $hsum (local.get $acc1)))))
        (br $blocks)))
    ;; the last n mod 8 pairs, one by one
    (local.set $end (i32.add (local.get $n8) (i32.shl (i32.and (local.get $n) (i32.const 7)) (i32.const 2))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $n8 (i32.add (i32.load (local.get $a)) (i32.load (local.get $b))))
        (local.set $sum (i64.add (local.get $sum) (i64.extend_i32_u
          (select (local.get $n8) (local.get $c) (i32.gt_s (local.get $n8) (local.get $c))))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (br $tail)))
    (local.get $sum))

  ;; sum returns sum_{i<n} a[i], values below 2^24: u32 lanes of at most
  ;; 256 terms per block of 1024.
  (func $sum (param $a i32) (param $n i32) (result i64)
    (local $sum i64) (local $end i32) (local $n4 i32) (local $acc v128)
    (local.set $n4 (i32.add (local.get $a) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $a) (local.get $n4)))
        (local.set $end (i32.add (local.get $a) (i32.const 4096)))
        (if (i32.gt_u (local.get $end) (local.get $n4)) (then (local.set $end (local.get $n4))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (loop $inner
          (local.set $acc (i32x4.add (local.get $acc) (v128.load (local.get $a))))
          (local.set $a (i32.add (local.get $a) (i32.const 16)))
          (br_if $inner (i32.lt_u (local.get $a) (local.get $end))))
        (local.set $sum (i64.add (local.get $sum) (call $hsum (local.get $acc))))
        (br $blocks)))
    (local.set $end (i32.add (local.get $n4) (i32.shl (i32.and (local.get $n) (i32.const 3)) (i32.const 2))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $sum (i64.add (local.get $sum) (i64.extend_i32_u (i32.load (local.get $a)))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (br $tail)))
    (local.get $sum))


  ;; rotations(dst, base, rotor, n, c, s0, m): for k < m,
  ;;
  ;;     dst[k] = sum(base) - n*c + sum_{i<n} max(rotor[s0+k+n-i], c-base[i])
  ;;
  ;; the excess of base plus the rotating array delayed by s0+k ticks
  ;; (0 <= s0, s0+m <= n, rotor of 2n+64 entries). Across shifts: blocks of
  ;; 16 consecutive shifts in 4 registers, one splat of c-base[i] per i
  ;; against consecutive rotor entries, u32 lanes widened every 256 ticks.
  ;; Lanes past m read the rotor's padding (up to rotor[2n+14]) and are
  ;; not stored.
  (func (export "rotations") (param $dst i32) (param $base i32) (param $rotor i32)
      (param $n i32) (param $c i32) (param $s0 i32) (param $m i32)
    (local $k i64) (local $kv v128) (local $j i32) (local $left i32)
    (local $i i32) (local $i1 i32) (local $p i32) (local $q i32) (local $nb v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128) (local $v4 v128) (local $v5 v128) (local $v6 v128) (local $v7 v128)
    (local.set $k (i64.sub (call $sum (local.get $base) (local.get $n))
      (i64.mul (i64.extend_i32_u (local.get $n)) (i64.extend_i32_u (local.get $c)))))
    (local.set $kv (i64x2.splat (local.get $k)))
    (block $done
      (loop $shifts
        (br_if $done (i32.ge_u (local.get $j) (local.get $m)))
        (local.set $v0 (local.get $kv)) (local.set $v1 (local.get $kv)) (local.set $v2 (local.get $kv)) (local.set $v3 (local.get $kv)) (local.set $v4 (local.get $kv)) (local.set $v5 (local.get $kv)) (local.set $v6 (local.get $kv)) (local.set $v7 (local.get $kv))
        (local.set $i (i32.const 0))
        (block $ticks
          (loop $chunks
            (br_if $ticks (i32.ge_u (local.get $i) (local.get $n)))
            (local.set $i1 (i32.add (local.get $i) (i32.const 256)))
            (if (i32.gt_u (local.get $i1) (local.get $n)) (then (local.set $i1 (local.get $n))))
            (local.set $a0 (v128.const i32x4 0 0 0 0)) (local.set $a1 (v128.const i32x4 0 0 0 0)) (local.set $a2 (v128.const i32x4 0 0 0 0)) (local.set $a3 (v128.const i32x4 0 0 0 0))
            ;; p = &rotor[s0+j+n-i], q = &base[i]
            (local.set $p (i32.add (local.get $rotor) (i32.shl
              (i32.sub (i32.add (i32.add (local.get $s0) (local.get $j)) (local.get $n)) (local.get $i)) (i32.const 2))))
            (local.set $q (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 2))))
            (local.set $i1 (i32.add (local.get $base) (i32.shl (local.get $i1) (i32.const 2))))
            (loop $tick
              (local.set $nb (i32x4.splat (i32.sub (local.get $c) (i32.load (local.get $q)))))
              (local.set $a0 (i32x4.add (local.get $a0) (i32x4.max_s (v128.load (local.get $p)) (local.get $nb))))
              (local.set $a1 (i32x4.add (local.get $a1) (i32x4.max_s (v128.load offset=16 (local.get $p)) (local.get $nb))))
              (local.set $a2 (i32x4.add (local.get $a2) (i32x4.max_s (v128.load offset=32 (local.get $p)) (local.get $nb))))
              (local.set $a3 (i32x4.add (local.get $a3) (i32x4.max_s (v128.load offset=48 (local.get $p)) (local.get $nb))))
              (local.set $p (i32.sub (local.get $p) (i32.const 4)))
              (local.set $q (i32.add (local.get $q) (i32.const 4)))
              (br_if $tick (i32.lt_u (local.get $q) (local.get $i1))))
            (local.set $i (i32.shr_u (i32.sub (local.get $q) (local.get $base)) (i32.const 2)))
            (local.set $v0 (i64x2.add (local.get $v0) (i64x2.extend_low_i32x4_u (local.get $a0))))
            (local.set $v1 (i64x2.add (local.get $v1) (i64x2.extend_high_i32x4_u (local.get $a0))))
            (local.set $v2 (i64x2.add (local.get $v2) (i64x2.extend_low_i32x4_u (local.get $a1))))
            (local.set $v3 (i64x2.add (local.get $v3) (i64x2.extend_high_i32x4_u (local.get $a1))))
            (local.set $v4 (i64x2.add (local.get $v4) (i64x2.extend_low_i32x4_u (local.get $a2))))
            (local.set $v5 (i64x2.add (local.get $v5) (i64x2.extend_high_i32x4_u (local.get $a2))))
            (local.set $v6 (i64x2.add (local.get $v6) (i64x2.extend_low_i32x4_u (local.get $a3))))
            (local.set $v7 (i64x2.add (local.get $v7) (i64x2.extend_high_i32x4_u (local.get $a3))))
            (br $chunks)))
        ;; store the block's shifts that are asked for
        (local.set $left (i32.sub (local.get $m) (local.get $j)))
        (local.set $p (i32.add (local.get $dst) (i32.shl (local.get $j) (i32.const 3))))
        (if (i32.ge_u (local.get $left) (i32.const 16))
          (then
            (v128.store (local.get $p) (local.get $v0))
            (v128.store offset=16 (local.get $p) (local.get $v1))
            (v128.store offset=32 (local.get $p) (local.get $v2))
            (v128.store offset=48 (local.get $p) (local.get $v3))
            (v128.store offset=64 (local.get $p) (local.get $v4))
            (v128.store offset=80 (local.get $p) (local.get $v5))
            (v128.store offset=96 (local.get $p) (local.get $v6))
            (v128.store offset=112 (local.get $p) (local.get $v7))
          )
          (else
            (if (i32.gt_u (local.get $left) (i32.const 0)) (then (i64.store (local.get $p) (i64x2.extract_lane 0 (local.get $v0)))))
            (if (i32.gt_u (local.get $left) (i32.const 1)) (then (i64.store offset=8 (local.get $p) (i64x2.extract_lane 1 (local.get $v0)))))
            (if (i32.gt_u (local.get $left) (i32.const 2)) (then (i64.store offset=16 (local.get $p) (i64x2.extract_lane 0 (local.get $v1)))))
            (if (i32.gt_u (local.get $left) (i32.const 3)) (then (i64.store offset=24 (local.get $p) (i64x2.extract_lane 1 (local.get $v1)))))
            (if (i32.gt_u (local.get $left) (i32.const 4)) (then (i64.store offset=32 (local.get $p) (i64x2.extract_lane 0 (local.get $v2)))))
            (if (i32.gt_u (local.get $left) (i32.const 5)) (then (i64.store offset=40 (local.get $p) (i64x2.extract_lane 1 (local.get $v2)))))
            (if (i32.gt_u (local.get $left) (i32.const 6)) (then (i64.store offset=48 (local.get $p) (i64x2.extract_lane 0 (local.get $v3)))))
            (if (i32.gt_u (local.get $left) (i32.const 7)) (then (i64.store offset=56 (local.get $p) (i64x2.extract_lane 1 (local.get $v3)))))
            (if (i32.gt_u (local.get $left) (i32.const 8)) (then (i64.store offset=64 (local.get $p) (i64x2.extract_lane 0 (local.get $v4)))))
            (if (i32.gt_u (local.get $left) (i32.const 9)) (then (i64.store offset=72 (local.get $p) (i64x2.extract_lane 1 (local.get $v4)))))
            (if (i32.gt_u (local.get $left) (i32.const 10)) (then (i64.store offset=80 (local.get $p) (i64x2.extract_lane 0 (local.get $v5)))))
            (if (i32.gt_u (local.get $left) (i32.const 11)) (then (i64.store offset=88 (local.get $p) (i64x2.extract_lane 1 (local.get $v5)))))
            (if (i32.gt_u (local.get $left) (i32.const 12)) (then (i64.store offset=96 (local.get $p) (i64x2.extract_lane 0 (local.get $v6)))))
            (if (i32.gt_u (local.get $left) (i32.const 13)) (then (i64.store offset=104 (local.get $p) (i64x2.extract_lane 1 (local.get $v6)))))
            (if (i32.gt_u (local.get $left) (i32.const 14)) (then (i64.store offset=112 (local.get $p) (i64x2.extract_lane 0 (local.get $v7)))))
          ))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $shifts))))

  ;; excess_slack(a, n, c, out): out[0] = sum_{i<n} max(a[i] - c, 0) and
  ;; out[1] = sum_{i<n} max(c - a[i], 0), each term below 2^24: u32 lanes of
  ;; at most 256 terms per block of 1024.
  (func $excess_slack (export "excess_slack") (param $a i32) (param $n i32) (param $c i32) (param $out i32)
    (local $e i64) (local $s i64) (local $end i32) (local $n4 i32) (local $x i32)
    (local $cv v128) (local $v v128) (local $ea v128) (local $sa v128)
    (local.set $cv (i32x4.splat (local.get $c)))
    (local.set $n4 (i32.add (local.get $a) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $a) (local.get $n4)))
        (local.set $end (i32.add (local.get $a) (i32.const 4096)))
        (if (i32.gt_u (local.get $end) (local.get $n4)) (then (local.set $end (local.get $n4))))
        (local.set $ea (v128.const i32x4 0 0 0 0))
        (local.set $sa (v128.const i32x4 0 0 0 0))
        (loop $inner
          (local.set $v (v128.load (local.get $a)))
          (local.set $ea (i32x4.add (local.get $ea)
            (i32x4.max_s (i32x4.sub (local.get $v) (local.get $cv)) (v128.const i32x4 0 0 0 0))))
          (local.set $sa (i32x4.add (local.get $sa)
            (i32x4.max_s (i32x4.sub (local.get $cv) (local.get $v)) (v128.const i32x4 0 0 0 0))))
          (local.set $a (i32.add (local.get $a) (i32.const 16)))
          (br_if $inner (i32.lt_u (local.get $a) (local.get $end))))
        (local.set $e (i64.add (local.get $e) (call $hsum (local.get $ea))))
        (local.set $s (i64.add (local.get $s) (call $hsum (local.get $sa))))
        (br $blocks)))
    (local.set $end (i32.add (local.get $n4) (i32.shl (i32.and (local.get $n) (i32.const 3)) (i32.const 2))))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $x (i32.sub (i32.load (local.get $a)) (local.get $c)))
        (if (i32.gt_s (local.get $x) (i32.const 0))
          (then (local.set $e (i64.add (local.get $e) (i64.extend_i32_u (local.get $x)))))
          (else (local.set $s (i64.sub (local.get $s) (i64.extend_i32_s (local.get $x))))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (br $tail)))
    (i64.store (local.get $out) (local.get $e))
    (i64.store offset=8 (local.get $out) (local.get $s)))

  ;; addrun adds the n int32s at s to those at d.
  (func $addrun (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $n4 i32)
    (local.set $n4 (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (block $vdone
      (loop $vec
        (br_if $vdone (i32.ge_u (local.get $d) (local.get $n4)))
        (v128.store (local.get $d) (i32x4.add (v128.load (local.get $d)) (v128.load (local.get $s))))
        (local.set $d (i32.add (local.get $d) (i32.const 16)))
        (local.set $s (i32.add (local.get $s) (i32.const 16)))
        (br $vec)))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $d) (local.get $end)))
        (i32.store (local.get $d) (i32.add (i32.load (local.get $d)) (i32.load (local.get $s))))
        (local.set $d (i32.add (local.get $d) (i32.const 4)))
        (local.set $s (i32.add (local.get $s) (i32.const 4)))
        (br $tail))))

  ;; add_rotated(dst, tile, n, t): dst[i] += tile[(i - t) mod n] for i < n
  ;; (0 <= t < n), in two straight runs.
  (func (export "add_rotated") (param $dst i32) (param $tile i32) (param $n i32) (param $t i32)
    (call $addrun (i32.add (local.get $dst) (i32.shl (local.get $t) (i32.const 2)))
      (local.get $tile) (i32.sub (local.get $n) (local.get $t)))
    (call $addrun (local.get $dst)
      (i32.add (local.get $tile) (i32.shl (i32.sub (local.get $n) (local.get $t)) (i32.const 2))) (local.get $t)))

;; sumrun sets the n int32s at d to those at a plus those at b.
  (func $sumrun (param $d i32) (param $a i32) (param $b i32) (param $n i32)
    (local $end i32) (local $n4 i32)
    (local.set $n4 (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (block $vdone
      (loop $vec
        (br_if $vdone (i32.ge_u (local.get $d) (local.get $n4)))
        (v128.store (local.get $d) (i32x4.add (v128.load (local.get $a)) (v128.load (local.get $b))))
        (local.set $d (i32.add (local.get $d) (i32.const 16)))
        (local.set $a (i32.add (local.get $a) (i32.const 16)))
        (local.set $b (i32.add (local.get $b) (i32.const 16)))
        (br $vec)))
    (block $tdone
      (loop $tail
        (br_if $tdone (i32.ge_u (local.get $d) (local.get $end)))
        (i32.store (local.get $d) (i32.add (i32.load (local.get $a)) (i32.load (local.get $b))))
        (local.set $d (i32.add (local.get $d) (i32.const 4)))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (br $tail))))

  ;; place(dst, base, tile, n, t, c, out): dst[i] = base[i] + tile[(i - t)
  ;; mod n] for i < n (0 <= t < n), in two straight runs, then out[0], out[1]
  ;; = excess_slack(dst, n, c): the link search's branch-and-bound node.
  (func (export "place") (param $dst i32) (param $base i32) (param $tile i32) (param $n i32) (param $t i32) (param $c i32) (param $out i32)
    (local $ht i32)
    (local.set $ht (i32.shl (local.get $t) (i32.const 2)))
    (call $sumrun (i32.add (local.get $dst) (local.get $ht)) (i32.add (local.get $base) (local.get $ht))
      (local.get $tile) (i32.sub (local.get $n) (local.get $t)))
    (call $sumrun (local.get $dst) (local.get $base)
      (i32.add (local.get $tile) (i32.shl (i32.sub (local.get $n) (local.get $t)) (i32.const 2))) (local.get $t))
    (call $excess_slack (local.get $dst) (local.get $n) (local.get $c) (local.get $out)))

  ;; below(a, n, xlo, xhi) is the index of the first of the n i64s at a that
  ;; is at most x (its two i32 halves, low first), or n: two lanes a step.
  (func (export "below") (param $a i32) (param $n i32) (param $xlo i32) (param $xhi i32) (result i32)
    (local $x i64) (local $xv v128) (local $p i32) (local $end i32) (local $n2 i32)
    (local.set $x (i64.or (i64.extend_i32_u (local.get $xlo)) (i64.shl (i64.extend_i32_u (local.get $xhi)) (i64.const 32))))
    (local.set $xv (i64x2.splat (local.get $x)))
    (local.set $p (local.get $a))
    (local.set $n2 (i32.add (local.get $a) (i32.shl (i32.and (local.get $n) (i32.const -2)) (i32.const 3))))
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $n) (i32.const 3))))
    (block $vdone
      (loop $vec
        (br_if $vdone (i32.ge_u (local.get $p) (local.get $n2)))
        (br_if $vdone (v128.any_true (i64x2.le_s (v128.load (local.get $p)) (local.get $xv))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $vec)))
    (block $found
      (loop $one
        (br_if $found (i32.ge_u (local.get $p) (local.get $end)))
        (br_if $found (i64.le_s (i64.load (local.get $p)) (local.get $x)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $one)))
    (i32.shr_u (i32.sub (local.get $p) (local.get $a)) (i32.const 3)))

    ;; fold_delta(psi, m, base, n, v, c): psi[i mod m] += max(base[i] + v, c)
  ;; - max(base[i], c) for i < n (m >= 1), which is what demand v adds to
  ;; the excess over c at tick i. The circle goes in periods of m ticks;
  ;; four at a time within a period, widened to the i64 psi.
  (func (export "fold_delta") (param $psi i32) (param $m i32) (param $base i32) (param $n i32) (param $v i32) (param $c i32)
    (local $end i32) (local $len i32) (local $p i32) (local $q i32) (local $q4 i32) (local $qe i32) (local $b i32)
    (local $vv v128) (local $cv v128) (local $bv v128) (local $dv v128)
    (local.set $vv (i32x4.splat (local.get $v)))
    (local.set $cv (i32x4.splat (local.get $c)))
    (local.set $q (local.get $base))
    (local.set $end (i32.add (local.get $base) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $periods
        (br_if $done (i32.ge_u (local.get $q) (local.get $end)))
        ;; this period: ticks [q, qe), psi from its start
        (local.set $len (i32.shr_u (i32.sub (local.get $end) (local.get $q)) (i32.const 2)))
        (if (i32.gt_u (local.get $len) (local.get $m)) (then (local.set $len (local.get $m))))
        (local.set $qe (i32.add (local.get $q) (i32.shl (local.get $len) (i32.const 2))))
        (local.set $q4 (i32.add (local.get $q) (i32.shl (i32.and (local.get $len) (i32.const -4)) (i32.const 2))))
        (local.set $p (local.get $psi))
        (block $vdone
          (loop $vec
            (br_if $vdone (i32.ge_u (local.get $q) (local.get $q4)))
            (local.set $bv (v128.load (local.get $q)))
            (local.set $dv (i32x4.sub (i32x4.max_s (i32x4.add (local.get $bv) (local.get $vv)) (local.get $cv))
                                      (i32x4.max_s (local.get $bv) (local.get $cv))))
            (v128.store (local.get $p) (i64x2.add (v128.load (local.get $p)) (i64x2.extend_low_i32x4_u (local.get $dv))))
            (v128.store offset=16 (local.get $p) (i64x2.add (v128.load offset=16 (local.get $p)) (i64x2.extend_high_i32x4_u (local.get $dv))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (br $vec)))
        (block $tdone
          (loop $tail
            (br_if $tdone (i32.ge_u (local.get $q) (local.get $qe)))
            (local.set $b (i32.load (local.get $q)))
            (i64.store (local.get $p) (i64.add (i64.load (local.get $p)) (i64.extend_i32_u
              (i32.sub
                (select (i32.add (local.get $b) (local.get $v)) (local.get $c) (i32.gt_s (i32.add (local.get $b) (local.get $v)) (local.get $c)))
                (select (local.get $b) (local.get $c) (i32.gt_s (local.get $b) (local.get $c)))))))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (local.set $p (i32.add (local.get $p) (i32.const 8)))
            (br $tail)))
        (br $periods))))

  ;; residues(tab, m, base, n, v, c, lv, dst, out): the residue walk of the
  ;; link search (kernels.Residues; the reference is residuesGeneric in
  ;; residues.go). tab holds m rows of 8 i32s, one per class structure:
  ;; mod, at (the class it shows at residue 0, advanced in place residue by
  ;; residue), and the addresses of its off (mod+1 i32s), val (i32), cnt
  ;; and sum (i64) arrays. lv is scratch of 4(m+1) i64s: per structure l,
  ;; for the structures from l on, the sums of their classes' smallest and
  ;; largest demands, the tuple count and the summed demand. For each
  ;; residue i < n it adds the excess over c of base[i] + v plus every tuple
  ;; of the classes shown there (each weighted by its count), stores it at
  ;; dst[i] unless dst is 0, and writes out[0] = the sum, out[1] = the
  ;; evaluations. Scalar i64, as the Go reference computes it.
  (global $wtab (mut i32) (i32.const 0))
  (global $wlast (mut i32) (i32.const 0))
  (global $wlv (mut i32) (i32.const 0))
  (global $wc (mut i64) (i64.const 0))
  (global $wevals (mut i64) (i64.const 0))

  (func (export "residues") (param $tab i32) (param $m i32) (param $base i32) (param $n i32)
      (param $v i32) (param $c i32) (param $lv i32) (param $dst i32) (param $out i32)
    (local $i i32) (local $row i32) (local $cur i32) (local $offp i32) (local $lo i32) (local $hi i32)
    (local $val i32) (local $e i64) (local $x i64) (local $cl i64) (local $nn i64) (local $at i32)
    (global.set $wtab (local.get $tab))
    (global.set $wlast (i32.sub (local.get $m) (i32.const 1)))
    (global.set $wlv (local.get $lv))
    (global.set $wc (i64.extend_i32_s (local.get $c)))
    (global.set $wevals (i64.const 0))
    ;; lv[m] = (0, 0, 1, 0)
    (local.set $cur (i32.add (local.get $lv) (i32.shl (local.get $m) (i32.const 5))))
    (i64.store (local.get $cur) (i64.const 0))
    (i64.store offset=8 (local.get $cur) (i64.const 0))
    (i64.store offset=16 (local.get $cur) (i64.const 1))
    (i64.store offset=24 (local.get $cur) (i64.const 0))
    (block $done
      (loop $residue
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        ;; the levels, from the last structure up: cur = lv[l], cur+32 = lv[l+1]
        (local.set $row (i32.add (local.get $tab) (i32.shl (local.get $m) (i32.const 5))))
        (local.set $cur (i32.add (local.get $lv) (i32.shl (local.get $m) (i32.const 5))))
        (loop $levels
          (local.set $row (i32.sub (local.get $row) (i32.const 32)))
          (local.set $cur (i32.sub (local.get $cur) (i32.const 32)))
          (local.set $offp (i32.add (i32.load offset=8 (local.get $row)) (i32.shl (i32.load offset=4 (local.get $row)) (i32.const 2))))
          (local.set $lo (i32.load (local.get $offp)))
          (local.set $hi (i32.load offset=4 (local.get $offp)))
          (local.set $val (i32.load offset=12 (local.get $row)))
          (local.set $cl (i64.load (i32.add (i32.load offset=16 (local.get $row)) (i32.shl (local.get $lo) (i32.const 3)))))
          (local.set $nn (i64.load offset=48 (local.get $cur)))
          (i64.store (local.get $cur) (i64.add (i64.load offset=32 (local.get $cur))
            (i64.extend_i32_s (i32.load (i32.add (local.get $val) (i32.shl (local.get $lo) (i32.const 2)))))))
          (i64.store offset=8 (local.get $cur) (i64.add (i64.load offset=40 (local.get $cur))
            (i64.extend_i32_s (i32.load (i32.add (local.get $val) (i32.shl (i32.sub (local.get $hi) (i32.const 1)) (i32.const 2)))))))
          (i64.store offset=16 (local.get $cur) (i64.mul (local.get $cl) (local.get $nn)))
          (i64.store offset=24 (local.get $cur) (i64.add
            (i64.mul (i64.load (i32.add (i32.load offset=20 (local.get $row)) (i32.shl (local.get $lo) (i32.const 3)))) (local.get $nn))
            (i64.mul (local.get $cl) (i64.load offset=56 (local.get $cur)))))
          (br_if $levels (i32.gt_u (local.get $row) (local.get $tab))))
        (local.set $x (call $product (i32.const 0)
          (i64.add (i64.extend_i32_s (i32.load (i32.add (local.get $base) (i32.shl (local.get $i) (i32.const 2)))))
                   (i64.extend_i32_s (local.get $v)))
          (i64.const 1)))
        (if (local.get $dst) (then
          (i64.store (i32.add (local.get $dst) (i32.shl (local.get $i) (i32.const 3))) (local.get $x))))
        (local.set $e (i64.add (local.get $e) (local.get $x)))
        ;; every structure shows its next class
        (local.set $row (local.get $tab))
        (local.set $cur (i32.add (local.get $tab) (i32.shl (local.get $m) (i32.const 5))))
        (loop $advance
          (local.set $at (i32.add (i32.load offset=4 (local.get $row)) (i32.const 1)))
          (if (i32.eq (local.get $at) (i32.load (local.get $row))) (then (local.set $at (i32.const 0))))
          (i32.store offset=4 (local.get $row) (local.get $at))
          (local.set $row (i32.add (local.get $row) (i32.const 32)))
          (br_if $advance (i32.lt_u (local.get $row) (local.get $cur))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $residue)))
    (i64.store (local.get $out) (local.get $e))
    (i64.store offset=8 (local.get $out) (global.get $wevals)))

  ;; product(l, p, mult) is mult times the excess over every tuple of the
  ;; classes structures l.. show, on top of the partial sum p: nothing if
  ;; p plus their largest demands stays within c, the closed form if p
  ;; plus their smallest passes it, else one level deeper per entry of
  ;; structure l; the last structure is one binary search over its suffix
  ;; counts and sums.
  (func $product (param $l i32) (param $p i64) (param $mult i64) (result i64)
    (local $row i32) (local $offp i32) (local $lo i32) (local $hi i32) (local $val i32) (local $cnt i32)
    (local $i i32) (local $j i32) (local $h i32) (local $r i32) (local $e i64) (local $k i64)
    (local.set $row (i32.add (global.get $wtab) (i32.shl (local.get $l) (i32.const 5))))
    (local.set $offp (i32.add (i32.load offset=8 (local.get $row)) (i32.shl (i32.load offset=4 (local.get $row)) (i32.const 2))))
    (local.set $lo (i32.load (local.get $offp)))
    (local.set $hi (i32.load offset=4 (local.get $offp)))
    (local.set $val (i32.load offset=12 (local.get $row)))
    (local.set $cnt (i32.load offset=16 (local.get $row)))
    (global.set $wevals (i64.add (global.get $wevals) (i64.const 1)))
    (if (i32.eq (local.get $l) (global.get $wlast)) (then
      ;; the first entry with p + val > c
      (local.set $i (local.get $lo))
      (local.set $j (local.get $hi))
      (block $found
        (loop $search
          (br_if $found (i32.ge_s (local.get $i) (local.get $j)))
          (local.set $h (i32.shr_u (i32.add (local.get $i) (local.get $j)) (i32.const 1)))
          (if (i64.le_s (i64.add (local.get $p) (i64.extend_i32_s (i32.load (i32.add (local.get $val) (i32.shl (local.get $h) (i32.const 2))))))
                        (global.get $wc))
            (then (local.set $i (i32.add (local.get $h) (i32.const 1))))
            (else (local.set $j (local.get $h))))
          (br $search)))
      (if (i32.eq (local.get $i) (local.get $hi)) (then (return (i64.const 0))))
      (return (i64.mul (local.get $mult) (i64.add
        (i64.mul (i64.load (i32.add (local.get $cnt) (i32.shl (local.get $i) (i32.const 3))))
                 (i64.sub (local.get $p) (global.get $wc)))
        (i64.load (i32.add (i32.load offset=20 (local.get $row)) (i32.shl (local.get $i) (i32.const 3)))))))))
    (local.set $r (i32.add (global.get $wlv) (i32.shl (local.get $l) (i32.const 5))))
    (if (i64.le_s (i64.add (local.get $p) (i64.load offset=8 (local.get $r))) (global.get $wc))
      (then (return (i64.const 0))))
    (if (i64.ge_s (i64.add (local.get $p) (i64.load (local.get $r))) (global.get $wc))
      (then (return (i64.mul (local.get $mult) (i64.add
        (i64.mul (i64.load offset=16 (local.get $r)) (i64.sub (local.get $p) (global.get $wc)))
        (i64.load offset=24 (local.get $r)))))))
    (local.set $i (local.get $lo))
    (block $walked
      (loop $walk
        (br_if $walked (i32.ge_s (local.get $i) (local.get $hi)))
        (local.set $k (i64.load (i32.add (local.get $cnt) (i32.shl (local.get $i) (i32.const 3)))))
        (if (i32.lt_s (i32.add (local.get $i) (i32.const 1)) (local.get $hi)) (then
          (local.set $k (i64.sub (local.get $k) (i64.load offset=8 (i32.add (local.get $cnt) (i32.shl (local.get $i) (i32.const 3))))))))
        (local.set $e (i64.add (local.get $e) (call $product (i32.add (local.get $l) (i32.const 1))
          (i64.add (local.get $p) (i64.extend_i32_s (i32.load (i32.add (local.get $val) (i32.shl (local.get $i) (i32.const 2))))))
          (i64.mul (local.get $mult) (local.get $k)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $walk)))
    (global.set $wevals (i64.add (global.get $wevals) (i64.extend_i32_s (i32.sub (local.get $hi) (local.get $lo)))))
    (local.get $e))

  ;; windows(out, k, x0lo, x0hi, psi, m, runs, r, from0, pre): the link
  ;; search's run scan (kernels.Windows; the reference is windowsGeneric in
  ;; windows.go). runs holds r rows of 16 bytes: start and len (i32), then
  ;; n (i64). For each shift s < k (k <= m) it adds to out[s] x0 (its two
  ;; i32 halves, low first) and, per run, n times the sum of psi (m i64s)
  ;; over the run's residues moved by from0+s, as one
  ;; difference of the prefix sums pre (2m+1 i64s, over two turns of the
  ;; circle, written as far as the windows reach). The prefix sum is
  ;; serial; the second turn and the windows go two i64 lanes at a time.
  (func (export "windows") (param $out i32) (param $k i32) (param $x0lo i32) (param $x0hi i32)
      (param $psi i32) (param $m i32) (param $runs i32) (param $r i32) (param $from0 i32) (param $pre i32)
    (local $reach i32) (local $q i32) (local $p i32) (local $end i32) (local $a i32) (local $l i32)
    (local $n i32) (local $x i64) (local $tv v128) (local $xv v128)
    (local.set $xv (i64x2.splat (i64.or (i64.extend_i32_u (local.get $x0lo))
                                        (i64.shl (i64.extend_i32_u (local.get $x0hi)) (i64.const 32)))))
    ;; how far the windows reach: per run, its start plus its length at
    ;; the last shift before the start wraps (after it, the windows lie
    ;; lower); nothing without shifts
    (local.set $q (local.get $runs))
    (local.set $end (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 4))))
    (if (i32.eqz (local.get $k)) (then (local.set $end (local.get $q))))
    (block $rdone
      (loop $reaches
        (br_if $rdone (i32.ge_u (local.get $q) (local.get $end)))
        (local.set $a (call $wstart (local.get $q) (local.get $from0) (local.get $m)))
        (local.set $n (i32.sub (local.get $m) (local.get $a)))
        (if (i32.gt_s (local.get $n) (local.get $k)) (then (local.set $n (local.get $k))))
        (local.set $reach (call $imax (local.get $reach)
          (i32.add (i32.add (local.get $a) (local.get $n)) (i32.sub (i32.load offset=4 (local.get $q)) (i32.const 1)))))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br $reaches)))
    ;; the first turn, serial: pre[i+1] = pre[i] + psi[i]
    (i64.store (local.get $pre) (i64.const 0))
    (local.set $n (local.get $reach))
    (if (i32.gt_s (local.get $n) (local.get $m)) (then (local.set $n (local.get $m))))
    (local.set $q (local.get $psi))
    (local.set $p (local.get $pre))
    (local.set $end (i32.add (local.get $psi) (i32.shl (local.get $n) (i32.const 3))))
    (block $pdone
      (loop $prefix
        (br_if $pdone (i32.ge_u (local.get $q) (local.get $end)))
        (local.set $x (i64.add (local.get $x) (i64.load (local.get $q))))
        (i64.store offset=8 (local.get $p) (local.get $x))
        (local.set $q (i32.add (local.get $q) (i32.const 8)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $prefix)))
    ;; the second turn: pre[m+1+i] = pre[m] + pre[1+i], i < reach-m
    (if (i32.gt_s (local.get $reach) (local.get $m)) (then
      (local.set $tv (i64x2.splat (local.get $x)))
      (local.set $q (i32.add (local.get $pre) (i32.const 8)))
      (local.set $p (i32.add (local.get $pre) (i32.shl (i32.add (local.get $m) (i32.const 1)) (i32.const 3))))
      (local.set $end (i32.add (local.get $q) (i32.shl (i32.sub (local.get $reach) (local.get $m)) (i32.const 3))))
      (block $tdone
        (loop $turn
          (br_if $tdone (i32.gt_u (i32.add (local.get $q) (i32.const 16)) (local.get $end)))
          (v128.store (local.get $p) (i64x2.add (local.get $tv) (v128.load (local.get $q))))
          (local.set $q (i32.add (local.get $q) (i32.const 16)))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br $turn)))
      (if (i32.lt_u (local.get $q) (local.get $end)) (then
        (i64.store (local.get $p) (i64.add (local.get $x) (i64.load (local.get $q))))))))
    ;; with no runs, x0 alone: windows of length 0 at pre (within the
    ;; scratch, k <= m), whatever it holds
    (if (i32.eqz (local.get $r)) (then
      (call $addwin (local.get $out) (local.get $pre) (local.get $pre) (local.get $k) (v128.const i64x2 0 0) (local.get $xv))
      (return)))
    ;; the windows, run by run: the shifts before its start wraps, then
    ;; those after; the first run adds x0 too
    (local.set $q (local.get $runs))
    (local.set $end (i32.add (local.get $runs) (i32.shl (local.get $r) (i32.const 4))))
    (block $wdone
      (loop $wruns
        (br_if $wdone (i32.ge_u (local.get $q) (local.get $end)))
        (local.set $a (call $wstart (local.get $q) (local.get $from0) (local.get $m)))
        (local.set $l (i32.shl (i32.load offset=4 (local.get $q)) (i32.const 3)))
        (local.set $tv (i64x2.splat (i64.load offset=8 (local.get $q))))
        (local.set $n (i32.sub (local.get $m) (local.get $a)))
        (if (i32.gt_s (local.get $n) (local.get $k)) (then (local.set $n (local.get $k))))
        (local.set $p (i32.add (local.get $pre) (i32.shl (local.get $a) (i32.const 3))))
        (call $addwin (local.get $out) (local.get $p) (i32.add (local.get $p) (local.get $l)) (local.get $n)
          (local.get $tv) (local.get $xv))
        (call $addwin (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3)))
          (local.get $pre) (i32.add (local.get $pre) (local.get $l)) (i32.sub (local.get $k) (local.get $n))
          (local.get $tv) (local.get $xv))
        (local.set $xv (v128.const i64x2 0 0))
        (local.set $q (i32.add (local.get $q) (i32.const 16)))
        (br $wruns))))

  ;; wstart is the residue where the run at q starts at shift from0:
  ;; start + from0, less m past the circle.
  (func $wstart (param $q i32) (param $from0 i32) (param $m i32) (result i32)
    (local $a i32)
    (local.set $a (i32.add (i32.load (local.get $q)) (local.get $from0)))
    (if (i32.ge_s (local.get $a) (local.get $m)) (then (local.set $a (i32.sub (local.get $a) (local.get $m)))))
    (local.get $a))

  (func $imax (param $a i32) (param $b i32) (result i32)
    (select (local.get $a) (local.get $b) (i32.gt_s (local.get $a) (local.get $b))))

  ;; addwin adds x plus n times hi[s] - lo[s] to dst[s] for s < cnt (nv, xv:
  ;; n and x in both i64 lanes): four shifts at a time, then two, then one.
  (func $addwin (param $dst i32) (param $lo i32) (param $hi i32) (param $cnt i32) (param $nv v128) (param $xv v128)
    (local $end i32)
    (local.set $end (i32.add (local.get $dst) (i32.shl (local.get $cnt) (i32.const 3))))
    (block $done4
      (loop $four
        (br_if $done4 (i32.gt_u (i32.add (local.get $dst) (i32.const 32)) (local.get $end)))
        (v128.store (local.get $dst) (i64x2.add (i64x2.add (v128.load (local.get $dst)) (local.get $xv))
          (i64x2.mul (local.get $nv) (i64x2.sub (v128.load (local.get $hi)) (v128.load (local.get $lo))))))
        (v128.store offset=16 (local.get $dst) (i64x2.add (i64x2.add (v128.load offset=16 (local.get $dst)) (local.get $xv))
          (i64x2.mul (local.get $nv) (i64x2.sub (v128.load offset=16 (local.get $hi)) (v128.load offset=16 (local.get $lo))))))
        (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
        (local.set $lo (i32.add (local.get $lo) (i32.const 32)))
        (local.set $hi (i32.add (local.get $hi) (i32.const 32)))
        (br $four)))
    (if (i32.le_u (i32.add (local.get $dst) (i32.const 16)) (local.get $end)) (then
      (v128.store (local.get $dst) (i64x2.add (i64x2.add (v128.load (local.get $dst)) (local.get $xv))
        (i64x2.mul (local.get $nv) (i64x2.sub (v128.load (local.get $hi)) (v128.load (local.get $lo))))))
      (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
      (local.set $lo (i32.add (local.get $lo) (i32.const 16)))
      (local.set $hi (i32.add (local.get $hi) (i32.const 16)))))
    (if (i32.lt_u (local.get $dst) (local.get $end)) (then
      (i64.store (local.get $dst) (i64.add (i64.add (i64.load (local.get $dst)) (i64x2.extract_lane 0 (local.get $xv)))
        (i64.mul (i64x2.extract_lane 0 (local.get $nv)) (i64.sub (i64.load (local.get $hi)) (i64.load (local.get $lo)))))))))
)
