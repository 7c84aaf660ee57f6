// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-inline-calls

ncore.program private @ext(!ncore.tile<hbm, 128x64xf32>)
ncore.program @calls_declaration(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error@+1 {{calls @ext, which is only a declaration: its program must be defined in the module to be inlined}}
  ncore.call_kernel @ext(%x) : !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program private @k(%i: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
ncore.program @call_in_loop(%x: !ncore.tile<hbm, 128x64xf32>) {
  ncore.loop %i trips 2 {
    // expected-error@+1 {{inside an ncore.loop cannot be inlined: a kernel call is a full barrier outside loops}}
    ncore.call_kernel @k(%x) : !ncore.tile<hbm, 128x64xf32>
  }
}

// -----

ncore.program private @k(%i: !ncore.tile<hbm, 64x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 64x64xf32>
  ncore.dma_copy %a, %i : !ncore.tile<sbuf, 64x64xf32>, !ncore.tile<hbm, 64x64xf32>
}
ncore.program @strided_operand(%x: !ncore.tile<hbm, 128x128xf32>) {
  %v = ncore.view %x offsets affine_map<() -> (0, 0)> : !ncore.tile<hbm, 128x128xf32> to !ncore.tile<hbm, 64x64xf32>
  // expected-error@+1 {{operand 0 ([64, 64] x f32 in hbm) is not a contiguous HBM window: the kernel would read a different layout}}
  ncore.call_kernel @k(%v) : !ncore.tile<hbm, 64x64xf32>
}

// -----

ncore.program @ping(%x: !ncore.tile<hbm, 64x64xf32>) {
  // expected-error@+1 {{could not inline the calls of callee @pong}}
  ncore.call_kernel @pong(%x) : !ncore.tile<hbm, 64x64xf32>
}
ncore.program private @pong(%x: !ncore.tile<hbm, 64x64xf32>) {
  // expected-error@+1 {{calls @ping recursively}}
  ncore.call_kernel @ping(%x) : !ncore.tile<hbm, 64x64xf32>
}
