// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=target=trn1 | FileCheck %s --check-prefix=TRN1
// RUN: seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=target=trn2 | FileCheck %s --check-prefix=TRN2
// RUN: not seam-opt %s --seam-plan-pairings --convert-seam-to-ncore=target=trn9 2>&1 | FileCheck %s --check-prefix=BAD

// One intermediate of 140 KiB per partition ([128, 35840] f32): over the
// trn1 budget (192 KiB SBUF per partition minus a third for working tiles),
// within trn2's (224 KiB). The spill is an HBM scratch named spillN that the
// consumer loads tile by tile.

// TRN1-LABEL: ncore.program @prog_big
// TRN1-SAME: seam.spills = 1
// TRN1: %[[S:.+]] = ncore.alloc {name = "spill{{[0-9]+}}"} : <hbm, 128x35840xf32>
// TRN1: ncore.activation gelu
// TRN1: ncore.dma_copy %{{.+}}, %{{.+}} : <hbm, 128x2048xf32>, <sbuf, 128x2048xf32>
// TRN1: ncore.view %[[S]]

// TRN2-LABEL: ncore.program @prog_big
// TRN2-SAME: seam.spills = 0
// TRN2: ncore.alloc : <sbuf, 128x35840xf32>
// TRN2-NOT: spill

// BAD: error: convert-seam-to-ncore: unknown target 'trn9' (expected trn1 or trn2)
func.func private @prog_big(%x: tensor<128x35840xf32>) -> tensor<128x35840xf32> attributes {seam.program} {
  %y = seam.gelu %x : tensor<128x35840xf32>
  %z = seam.silu %y : tensor<128x35840xf32>
  return %z : tensor<128x35840xf32>
}
