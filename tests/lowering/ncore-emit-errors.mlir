// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-dump -o /dev/null

ncore.program private @k(%i: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
ncore.program @not_inlined(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error@+1 {{must be inlined before emission (run ncore-inline-calls)}}
  ncore.call_kernel @k(%x) : !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program @inlined_in_loop(%x: !ncore.tile<hbm, 128x64xf32>) {
  ncore.loop %i trips 2 {
    // expected-error@+1 {{inside an ncore.loop cannot be emitted: a kernel call is a full barrier outside loops}}
    ncore.inlined_call @k(%x) : !ncore.tile<hbm, 128x64xf32> {
    ^bb0(%a: !ncore.tile<hbm, 128x64xf32>):
    }
  }
}

// -----

ncore.program @unallocated(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error@+1 {{has no offset: run ncore-allocate before emission}}
  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}


// -----

ncore.program @carried_too_deep(%x: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.loop %i trips 2 {
    // expected-error@+1 {{is carried over 2 loops inside 1}}
    ncore.sem_wait 0 ge 0 steps [1] carried 2 on dma
    ncore.dma_copy %a, %x on dma : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  }
}

// -----

// Instructions are translated ahead of emission on the context's threads,
// silently: the dma_copy's missing offset is not reported, because emission
// stops at the first error in program order.
ncore.program @first_error_only(%x: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.loop %i trips 2 {
    // expected-error@+1 {{inside an ncore.loop cannot be emitted}}
    ncore.inlined_call @k(%x) : !ncore.tile<hbm, 128x64xf32> {
    ^bb0(%b: !ncore.tile<hbm, 128x64xf32>):
    }
  }
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program @kernel_wait_without_call(%x: !ncore.tile<hbm, 128x64xf32>) {
  %a = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  // expected-error@+1 {{waits for kernel call 3, which no earlier dependency-boundary call is}}
  ncore.kernel_wait 3 for [4] on dma
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program @dependency_unscheduled(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error@+1 {{has the dependency boundary but no ncore.call_id / ncore.entry_waits pairs: run ncore-schedule before emission}}
  ncore.inlined_call @k(%x) : !ncore.tile<hbm, 128x64xf32> attributes {ncore.boundary = "dependency"} {
  ^bb0(%a: !ncore.tile<hbm, 128x64xf32>):
  }
}
