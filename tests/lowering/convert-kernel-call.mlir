// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s
// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore | FileCheck %s --check-prefix=BARRIER
// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=kernel-boundary=dependency | FileCheck %s --check-prefix=DEP
// RUN: not seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=kernel-boundary=none 2>&1 | FileCheck %s --check-prefix=BAD

// The boundary semantics travel on each call (ncore-schedule decides what
// they mean): none is the barrier.
// BARRIER-NOT: ncore.boundary
// DEP: ncore.call_kernel @kernel_qkv_{{[0-9a-f]+}}({{.*}}) {ncore.boundary = "dependency"}
// BAD: convert-seam-to-ncore: unknown kernel-boundary 'none' (barrier or dependency)

// A kernel call inside a program (compile mode): its operand, an
// intermediate, goes through HBM (the opaque boundary's round trip): the
// norm, whose only reader is the kernel, writes its rows there as it makes
// them. The kernel program is built by the kernels library and called on
// HBM tiles; its result is loaded back by the consumer. Calls with the same
// signature share one kernel program.

// CHECK-LABEL: func.func private @prog_k
// CHECK-SAME: seam.ncore_program = @ncore::@prog_k
// CHECK-LABEL: ncore.program @prog_k
// CHECK: %[[N:.+]] = ncore.alloc {name = "hbm{{[0-9]+}}"} : <hbm, 128x256xbf16>
// CHECK: ncore.activation square
// CHECK: ncore.tensor_scalar multiply %[[ROW:.+]], %{{.+}}, %{{.+}} : !ncore.tile<sbuf, 128x256xbf16>
// CHECK-NEXT: ncore.dma_copy %[[N]], %[[ROW]] : <hbm, 128x256xbf16>, <sbuf, 128x256xbf16>
// CHECK-NOT: relayout
// CHECK: %[[IN:.+]] = ncore.reshape %[[N]] : <hbm, 128x256xbf16> to <hbm, 1x128x256xbf16>
// CHECK: %[[RES:.+]] = ncore.alloc {name = "kernel{{[0-9]+}}"} : <hbm, 128x384xbf16>
// CHECK: %[[OUT:.+]] = ncore.reshape %[[RES]]
// CHECK: ncore.call_kernel @[[KERNEL:kernel_qkv_[0-9a-f]+]](%[[IN]], %{{.+}}, %[[OUT]]) : !ncore.tile<hbm, 1x128x256xbf16>, !ncore.tile<hbm, 256x384xbf16>, !ncore.tile<hbm, 1x128x384xbf16>
// CHECK: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 128x384xbf16>, <hbm, 128x384xbf16>
// CHECK: ncore.activation gelu
// CHECK: ncore.call_kernel @[[KERNEL]](
// CHECK: ncore.program @[[KERNEL]](
// CHECK-SAME: {ncore.role = "input"}
// CHECK-SAME: {ncore.role = "output"}
func.func private @prog_k(%x: tensor<1x128x256xbf16>, %w: tensor<256x384xbf16>) -> (tensor<1x128x384xbf16>, tensor<1x128x384xbf16>) attributes {seam.program} {
  %n = seam.layer_norm %x : (tensor<1x128x256xbf16>) -> tensor<1x128x256xbf16>
  %y = seam.kernel_call "qkv"(%n, %w) {config = {seam.fused_qkv = ["q", "k", "v"]}} : (tensor<1x128x256xbf16>, tensor<256x384xbf16>) -> tensor<1x128x384xbf16>
  %g = seam.gelu %y : tensor<1x128x384xbf16>
  %y2 = seam.kernel_call "qkv"(%x, %w) {config = {seam.fused_qkv = ["q", "k", "v"]}} : (tensor<1x128x256xbf16>, tensor<256x384xbf16>) -> tensor<1x128x384xbf16>
  return %g, %y2 : tensor<1x128x384xbf16>, tensor<1x128x384xbf16>
}
