// RUN: seam-opt %s -split-input-file -verify-diagnostics -ncore-assign-engines -o /dev/null

// Bad ncore.target attributes get one diagnostic naming the problem.
module attributes {ncore.target = {name = "trn9"}} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: unknown target 'trn9' (expected trn1 or trn2)}}
  ncore.program @bad_name() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}

// -----

module attributes {ncore.target = {name = "trn2", overrides = {nosuch = 1.0 : f64}}} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: the trn2 profile has no figure 'nosuch'; figures: }}
  ncore.program @bad_figure() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}

// -----

module attributes {ncore.target = {name = "trn2", overrides = {dma_fixed_cost_ns = -1.0 : f64}}} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: figure 'dma_fixed_cost_ns' must be}}
  ncore.program @bad_value() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}

// -----

module attributes {ncore.target = {name = "trn2", overrides = {dma_fixed_cost_ns = "a lot"}}} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: override 'dma_fixed_cost_ns' is not a number}}
  ncore.program @not_a_number() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}

// -----

module attributes {ncore.target = "trn2"} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: expected a dictionary}}
  ncore.program @not_a_dictionary() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}

// -----

module attributes {ncore.target = {name = "trn2", overides = {}}} {
  // expected-error@+1 {{ncore-assign-engines: ncore.target: unknown field 'overides' (expected name, overrides)}}
  ncore.program @misspelt() {
    %a = ncore.alloc : !ncore.tile<sbuf, 128x8xf32>
    ncore.memset %a, 1.0 : !ncore.tile<sbuf, 128x8xf32>
  }
}
