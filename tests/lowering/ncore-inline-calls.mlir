// RUN: seam-opt %s -split-input-file -ncore-inline-calls | FileCheck %s

// Each call becomes a copy of the callee's body: arguments bound to the
// operands, on-chip allocs moved by the call's bases, HBM scratch named after
// the callee, semaphores renumbered engine by engine (dma first: 7 -> 0 and
// 3 -> 1). The callee itself is left as it is.
// CHECK-LABEL: ncore.program private @scale
// CHECK:         ncore.sem_signal 7 on dma
// CHECK-LABEL: ncore.program @caller
// CHECK:         %[[S:.+]] = ncore.alloc offset 0 {name = "spill0"}
// CHECK:         %[[Y1:.+]] = ncore.view
// CHECK-NEXT:    ncore.inlined_call @scale(%arg0, %[[S]]) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32> {
// CHECK-NEXT:    ^bb0(%[[I:.+]]: !ncore.tile<hbm, 128x64xf32>, %[[O:.+]]: !ncore.tile<hbm, 128x64xf32>):
// CHECK-NEXT:      %[[T:.+]] = ncore.alloc offset 32768 : <sbuf, 128x64xf32>
// CHECK-NEXT:      ncore.alloc offset 2048 : <psum, 128x64xf32>
// CHECK-NEXT:      %[[TMP:.+]] = ncore.alloc offset 0 {name = "scale.tmp"} : <hbm, 128x64xf32>
// CHECK-NEXT:      ncore.alloc offset 32768 {name = "scale.scratch1"} : <hbm, 128x64xf32>
// CHECK-NEXT:      ncore.dma_copy %[[T]], %[[I]]
// CHECK-NEXT:      ncore.sem_signal 0 on dma
// CHECK-NEXT:      ncore.sem_wait 0 ge 1 on scalar
// CHECK-NEXT:      ncore.tensor_scalar multiply
// CHECK-NEXT:      ncore.sem_signal 1 on scalar
// CHECK-NEXT:      ncore.sem_wait 1 ge 1 on dma
// CHECK-NEXT:      ncore.dma_copy %[[TMP]], %[[T]]
// CHECK-NEXT:      ncore.dma_copy %[[O]], %[[TMP]]
// CHECK-NEXT:    }
// No bases on the second call: the callee's own offsets.
// CHECK-NEXT:    ncore.inlined_call @scale(%[[S]], %[[Y1]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      ncore.alloc offset 0 : <sbuf, 128x64xf32>
// CHECK-NEXT:      ncore.alloc offset 0 : <psum, 128x64xf32>
// CHECK-NOT:     ncore.call_kernel
ncore.program private @scale(%i: !ncore.tile<hbm, 128x64xf32> {ncore.name = "in"},
                             %o: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output", ncore.name = "out"}) {
  %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  %p = ncore.alloc offset 0 : !ncore.tile<psum, 128x64xf32>
  %tmp = ncore.alloc offset 0 {name = "tmp"} : !ncore.tile<hbm, 128x64xf32>
  %u = ncore.alloc offset 32768 : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.sem_signal 7 on dma
  ncore.sem_wait 7 ge 1 on scalar
  ncore.tensor_scalar multiply %t, %t imm 2.0 on scalar : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.sem_signal 3 on scalar
  ncore.sem_wait 3 ge 1 on dma
  ncore.dma_copy %tmp, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %o, %tmp : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
ncore.program @caller(%x: !ncore.tile<hbm, 128x64xf32> {ncore.name = "x"},
                      %y: !ncore.tile<hbm, 192x64xf32> {ncore.role = "output", ncore.name = "y"}) {
  %s = ncore.alloc offset 0 {name = "spill0"} : !ncore.tile<hbm, 128x64xf32>
  %y1 = ncore.view %y offsets affine_map<() -> (64, 0)> : !ncore.tile<hbm, 192x64xf32> to !ncore.tile<hbm, 128x64xf32>
  ncore.call_kernel @scale(%x, %s) {ncore.sbuf_base = 32768 : i64, ncore.psum_base = 2048 : i64} : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.call_kernel @scale(%s, %y1) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}

// -----

// A callee's own calls are inlined first (whatever the order of the
// programs); the nested copy is a semaphore scope of its own (numbered when
// @inner was inlined into @outer) and its scratch gets a second prefix.
// CHECK-LABEL: ncore.program @top
// CHECK:         ncore.inlined_call @outer(%arg0)
// CHECK:           ncore.alloc offset 4096 : <sbuf, 64x64xf32>
// CHECK:           ncore.inlined_call @inner(%arg1)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        ncore.alloc offset 5120 : <sbuf, 64x64xf32>
// CHECK-NEXT:        ncore.alloc {name = "outer.inner.scratch0"} : <hbm, 64x64xf32>
// CHECK-NEXT:        ncore.dma_copy
// CHECK-NEXT:        ncore.sem_signal 0 on dma
// CHECK-NEXT:      }
// CHECK-NEXT:      ncore.dma_copy
// CHECK-NEXT:      ncore.sem_signal 0 on dma
// CHECK-LABEL: ncore.program private @outer
// CHECK:         ncore.inlined_call @inner
// CHECK:           ncore.alloc {name = "inner.scratch0"}
ncore.program @top(%x: !ncore.tile<hbm, 64x64xf32>) {
  ncore.call_kernel @outer(%x) {ncore.sbuf_base = 4096 : i64} : !ncore.tile<hbm, 64x64xf32>
}
ncore.program private @outer(%x: !ncore.tile<hbm, 64x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 64x64xf32>
  ncore.call_kernel @inner(%x) {ncore.sbuf_base = 1024 : i64} : !ncore.tile<hbm, 64x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 64x64xf32>, !ncore.tile<hbm, 64x64xf32>
  ncore.sem_signal 4 on dma
}
ncore.program private @inner(%x: !ncore.tile<hbm, 64x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 64x64xf32>
  %s = ncore.alloc : !ncore.tile<hbm, 64x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 64x64xf32>, !ncore.tile<hbm, 64x64xf32>
  ncore.sem_signal 5 on dma
}
