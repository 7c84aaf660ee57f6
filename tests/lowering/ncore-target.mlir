// RUN: seam-opt %s -split-input-file -ncore-split-dma | FileCheck %s
// RUN: seam-opt %s -split-input-file -ncore-split-dma=target=trn2 | FileCheck %s
// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-split-dma=target=trn1 -o /dev/null

// The target profile travels on the IR (ncore.target, dialect/ncore/
// NcoreTarget.h): every pass reads it there, overrides included, and a
// pass's target option only stands in when no enclosing op carries it.
// A 768 KiB weight slab loaded after some compute: on trn2 pieces of at
// least 4 x 600 ns x 23 B/ns (~55 KB) allow 8 pieces of 16 rows.
// CHECK-LABEL: ncore.program @slab
// CHECK: ncore.tensor_copy
// CHECK-COUNT-8: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 16x3072xbf16{{(, start = [0-9]+)?}}>, <hbm, 16x3072xbf16>
// CHECK-NOT: ncore.dma_copy
// An explicit target option that contradicts the IR is an error.
// expected-error@+1 {{ncore-split-dma: ncore.target: the module is compiled for 'trn2', but the pass's target option says 'trn1'}}
module attributes {ncore.target = {name = "trn2"}} {
  ncore.program @slab(%w: !ncore.tile<hbm, 128x3072xbf16> {ncore.role = "param"}) {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    %b = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.tensor_copy %b, %a on vector : !ncore.tile<sbuf, 128x8xf32>, !ncore.tile<sbuf, 128x8xf32>
    %t = ncore.alloc : !ncore.tile<sbuf, 128x3072xbf16>
    ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x3072xbf16>, !ncore.tile<hbm, 128x3072xbf16>
  }
}

// -----

// The same slab where the profile's DMA fixed cost is doubled (seam-run
// --set dma_fixed_cost_ns=1200): pieces of at least ~110 KB, so 4 of 32
// rows (192 KiB each).
// CHECK-LABEL: ncore.program @slab_costly_dma
// CHECK: ncore.tensor_copy
// CHECK-COUNT-4: ncore.dma_copy %{{.+}}, %{{.+}} : <sbuf, 32x3072xbf16{{(, start = [0-9]+)?}}>, <hbm, 32x3072xbf16>
// CHECK-NOT: ncore.dma_copy
// An explicit target option that contradicts the IR is an error.
// expected-error@+1 {{ncore-split-dma: ncore.target: the module is compiled for 'trn2', but the pass's target option says 'trn1'}}
module attributes {ncore.target = {name = "trn2", overrides = {dma_fixed_cost_ns = 1200.0 : f64}}} {
  ncore.program @slab_costly_dma(%w: !ncore.tile<hbm, 128x3072xbf16> {ncore.role = "param"}) {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    %b = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.tensor_copy %b, %a on vector : !ncore.tile<sbuf, 128x8xf32>, !ncore.tile<sbuf, 128x8xf32>
    %t = ncore.alloc : !ncore.tile<sbuf, 128x3072xbf16>
    ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x3072xbf16>, !ncore.tile<hbm, 128x3072xbf16>
  }
}
