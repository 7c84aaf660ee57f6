// RUN: seam-opt %s -split-input-file -verify-diagnostics

// One hardware or ISA rule per case; messages name the sizes involved.

ncore.program @partitions() {
  // expected-error @+1 {{sbuf tile has 256 partitions, at most 128}}
  %t = ncore.alloc : !ncore.tile<sbuf, 256x512xbf16>
}

// -----

ncore.program @psum_partitions() {
  // expected-error @+1 {{psum tile has 129 partitions, at most 128}}
  %t = ncore.alloc : !ncore.tile<psum, 129x512xf32>
}

// -----

ncore.program @partition_range() {
  // expected-error @+1 {{sbuf tile of 64 partitions starting at partition 96 exceeds 128 partitions}}
  %t = ncore.alloc : !ncore.tile<sbuf, 64x8xf32, start = 96>
}

// -----

ncore.program @start_partition_rule() {
  // expected-error @+1 {{sbuf tile of 96 partitions starts at partition 32: a tile of more than 64 partitions must start at partition 0}}
  %t = ncore.alloc : !ncore.tile<sbuf, 96x8xf32, start = 32>
}

// -----

ncore.program @psum_dtype() {
  // expected-error @+1 {{psum tile must be f32, got 'bf16'}}
  %t = ncore.alloc : !ncore.tile<psum, 128x512xbf16>
}

// -----

ncore.program @psum_bank() {
  // expected-error @+1 {{psum tile free size 1024 x f32 = 4096 bytes per partition exceeds one 2048-byte PSUM bank (512 f32)}}
  %t = ncore.alloc : !ncore.tile<psum, 128x1024xf32>
}

// -----

ncore.program @dtype() {
  // expected-error @+1 {{tile dtype must be f32 or bf16, got 'f16'}}
  %t = ncore.alloc : !ncore.tile<sbuf, 128x8xf16>
}

// -----

ncore.program @hbm_dtype() {
  // expected-error @+1 {{tile dtype must be f32 or bf16, got 'i32'}}
  %t = ncore.alloc : !ncore.tile<hbm, 128x8xi32>
}

// -----

ncore.program @onchip_rank() {
  // expected-error @+1 {{sbuf tile must be [partitions] x [free dims], got [128]}}
  %t = ncore.alloc : !ncore.tile<sbuf, 128xf32>
}

// -----

ncore.program @free_dims() {
  // expected-error @+1 {{sbuf tile has 5 free dims, at most 4}}
  %t = ncore.alloc : !ncore.tile<sbuf, 2x2x2x2x2x2xf32>
}

// -----

ncore.program @zero_dim() {
  // expected-error @+1 {{tile dimensions must be > 0, got [128, 0]}}
  %t = ncore.alloc : !ncore.tile<sbuf, 128x0xf32>
}

// -----

ncore.program @hbm_start() {
  // expected-error @+1 {{an hbm tile has no start partition (got 64)}}
  %t = ncore.alloc : !ncore.tile<hbm, 32x8xf32, start = 64>
}

// -----

ncore.program @memspace() {
  // expected-error @+1 {{unknown memory space 'dram' (expected hbm, sbuf or psum)}}
  %t = ncore.alloc : !ncore.tile<dram, 32x8xf32>
}

// -----

ncore.program @matmul_m() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  // expected-error @+1 {{stationary free size M = 256 exceeds 128 (PE array columns)}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<sbuf, 128x512xbf16>
}

// -----

ncore.program @matmul_n() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x1024xbf16>
  // expected-error @+1 {{moving free size 1024 exceeds 512 (one PSUM bank of fp32)}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x1024xbf16>
}

// -----

ncore.program @matmul_k() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 64x512xbf16>
  // expected-error @+1 {{contraction (partition) sizes differ: stationary K = 128, moving K = 64}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 64x512xbf16>
}

// -----

ncore.program @matmul_dst_shape() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x64xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  // expected-error @+1 {{dst must be [M, N] = [64, 512], got [128, 512] x f32 in psum}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x64xbf16>, !ncore.tile<sbuf, 128x512xbf16>
}

// -----

ncore.program @matmul_dst_sbuf() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  // expected-error @+1 {{matmul writes PSUM: dst is [128, 512] x f32 in sbuf}}
  ncore.matmul %d, %s, %m : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
}

// -----

ncore.program @matmul_reads_psum() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  %m = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{matmul reads SBUF: moving is [128, 512] x f32 in psum}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @matmul_dtypes() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  // expected-error @+1 {{stationary and moving dtypes differ: 'f32' vs 'bf16'}}
  ncore.matmul %d, %s, %m : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x512xbf16>
}

// -----

ncore.program @matmul_engine() {
  %d = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
  // expected-error @+1 {{cannot run on the vector engine (legal: tensor)}}
  ncore.matmul %d, %s, %m on vector : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
}

// -----

ncore.program @matmul_k_partitions() {
  // K <= 128 is the partition rule of the tile type.
  // expected-error @+1 {{sbuf tile has 256 partitions, at most 128}}
  %s = ncore.alloc : !ncore.tile<sbuf, 256x128xbf16>
}

// -----

ncore.program @transpose_free() {
  %d = ncore.alloc : !ncore.tile<psum, 128x128xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  // expected-error @+1 {{source free size 256 exceeds 128 (it becomes the partition dim)}}
  ncore.transpose %d, %s : !ncore.tile<psum, 128x128xf32>, !ncore.tile<sbuf, 128x256xbf16>
}

// -----

ncore.program @transpose_shape() {
  %d = ncore.alloc : !ncore.tile<psum, 128x64xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x64xbf16>
  // expected-error @+1 {{dst must be [64, 128] (the transpose of [128, 64] x bf16 in sbuf), got [128, 64] x f32 in psum}}
  ncore.transpose %d, %s : !ncore.tile<psum, 128x64xf32>, !ncore.tile<sbuf, 128x64xbf16>
}

// -----

ncore.program @transpose_dst() {
  %d = ncore.alloc : !ncore.tile<sbuf, 64x128xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{transpose writes PSUM: dst is [64, 128] x f32 in sbuf}}
  ncore.transpose %d, %s : !ncore.tile<sbuf, 64x128xf32>, !ncore.tile<sbuf, 128x64xf32>
}

// -----

ncore.program @transpose_engine() {
  %d = ncore.alloc : !ncore.tile<psum, 64x128xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x64xbf16>
  // expected-error @+1 {{cannot run on the gpsimd engine (legal: tensor)}}
  ncore.transpose %d, %s on gpsimd : !ncore.tile<psum, 64x128xf32>, !ncore.tile<sbuf, 128x64xbf16>
}

// -----

ncore.program @gpsimd_psum() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{on the gpsimd engine cannot access PSUM: operand #2 is [128, 512] x f32 in psum}}
  ncore.tensor_tensor add %d, %d, %p on gpsimd : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

// Only the Tensor engine writes PSUM (the runtime faults on any other
// writer; the verifier says so before anything runs).
ncore.program @memset_psum() {
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{writes PSUM, which only the Tensor engine does (matmul, transpose): operand #0 is [128, 512] x f32 in psum}}
  ncore.memset %p, 0.0 : !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @copy_into_psum() {
  %s = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{writes PSUM, which only the Tensor engine does}}
  ncore.tensor_copy %p, %s on scalar : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @iota_psum() {
  %p = ncore.alloc : !ncore.tile<psum, 128x1xf32>
  // expected-error @+1 {{on the gpsimd engine cannot access PSUM: operand #0 is [128, 1] x f32 in psum}}
  ncore.iota %p base 0.0 partition_step 1.0 free_step 0.0 : !ncore.tile<psum, 128x1xf32>
}

// -----

ncore.program @affine_select_psum() {
  %p = ncore.alloc : !ncore.tile<psum, 128x128xf32>
  %d = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  // expected-error @+1 {{on the gpsimd engine cannot access PSUM: operand #1 is [128, 128] x f32 in psum}}
  ncore.affine_select is_ge %d, %p base 0.0 partition_step 1.0 free_step -1.0 else 0.0 : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<psum, 128x128xf32>
}

// -----

ncore.program @iota_engine() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{cannot run on the vector engine (legal: gpsimd)}}
  ncore.iota %d base 0.0 partition_step 1.0 free_step 0.0 on vector : !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @activation_engine() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{cannot run on the vector engine (legal: scalar)}}
  ncore.activation exp %d, %d on vector : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @reciprocal_engine() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{cannot run on the scalar engine (legal: vector, gpsimd)}}
  ncore.reciprocal %d, %d on scalar : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @dma_engine(%x: !ncore.tile<hbm, 128x512xf32>) {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{cannot run on the tensor engine (legal: dma, sync)}}
  ncore.dma_copy %d, %x on tensor : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
}

// -----

ncore.program @hbm_only_dma(%x: !ncore.tile<hbm, 128x512xf32>) {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{cannot access HBM (only dma_copy and the collectives do): operand #1 is [128, 512] x f32 in hbm}}
  ncore.tensor_copy %d, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xf32>
}

// -----

ncore.program @hbm_only_dma_matmul(%x: !ncore.tile<hbm, 128x128xf32>) {
  %s = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  %m = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  // expected-error @+1 {{cannot access HBM (only dma_copy and the collectives do): operand #0 is [128, 128] x f32 in hbm}}
  ncore.matmul %x, %s, %m : !ncore.tile<hbm, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
}

// -----

ncore.program @dma_psum(%x: !ncore.tile<hbm, 128x512xf32>) {
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{PSUM is not a DMA endpoint: src is [128, 512] x f32 in psum}}
  ncore.dma_copy %x, %p : !ncore.tile<hbm, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @dma_dtype(%x: !ncore.tile<hbm, 128x512xbf16>) {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{DMA does not convert dtypes: dst is 'f32', src is 'bf16'}}
  ncore.dma_copy %d, %x : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<hbm, 128x512xbf16>
}

// -----

ncore.program @dma_count(%x: !ncore.tile<hbm, 128x512xf32>) {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  // expected-error @+1 {{src has 65536 elements ([128, 512] x f32 in hbm) but dst has 32768 ([128, 256] x f32 in sbuf)}}
  ncore.dma_copy %d, %x : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<hbm, 128x512xf32>
}

// -----

ncore.program @copy_layout() {
  %d = ncore.alloc : !ncore.tile<sbuf, 64x512xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  // expected-error @+1 {{dst and src must have the same partitions and free size: dst is 64 x 512 ([64, 512] x f32 in sbuf), src is 128 x 256 ([128, 256] x f32 in sbuf)}}
  ncore.tensor_copy %d, %s : !ncore.tile<sbuf, 64x512xf32>, !ncore.tile<sbuf, 128x256xf32>
}

// -----

ncore.program @activation_bias_shape() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x2xf32>
  // expected-error @+1 {{bias must be a [128, 1] per-partition tile, got [128, 2] x f32 in sbuf}}
  ncore.activation exp %d, %d bias %b : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x2xf32>
}

// -----

ncore.program @activation_two_biases() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %b = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{has both a bias tile and a bias immediate (1.500000e+00)}}
  ncore.activation exp %d, %d bias %b {bias = 1.5 : f32} : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @activation_reduce_shape() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %r = ncore.alloc : !ncore.tile<sbuf, 64x1xf32>
  // expected-error @+1 {{reduce must be a [128, 1] per-partition tile, got [64, 1] x f32 in sbuf}}
  ncore.activation exp %d, %d reduce %r : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 64x1xf32>
}

// -----

ncore.program @tensor_tensor_two_psum() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{reads at most one operand from PSUM (lhs and rhs are both in psum)}}
  ncore.tensor_tensor add %d, %p, %p : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @tensor_scalar_none() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{needs a scalar: an immediate (imm) or a [P, 1] tile}}
  ncore.tensor_scalar add %d, %d : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @tensor_scalar_both() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{takes an immediate (imm) or a [P, 1] tile, not both}}
  ncore.tensor_scalar add %d, %d, %c imm 1.0 : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @tensor_scalar_column() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 1x1xf32>
  // expected-error @+1 {{scalar must be a [128, 1] per-partition tile, got [1, 1] x f32 in sbuf}}
  ncore.tensor_scalar add %d, %d, %c : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 1x1xf32>
}

// -----

ncore.program @tensor_scalar_second_without_op() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{has a second scalar but no second operation (then)}}
  ncore.tensor_scalar add %d, %d imm 1.0 with %c : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @tensor_scalar_second_none() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{needs a second scalar: an immediate (imm1) or a [P, 1] tile (with)}}
  ncore.tensor_scalar add %d, %d imm 1.0 then multiply : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @tensor_scalar_second_both() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  // expected-error @+1 {{takes a second immediate (imm1) or a [P, 1] tile (with), not both}}
  ncore.tensor_scalar add %d, %d imm 1.0 then multiply with %c imm1 2.0 : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
}

// -----

ncore.program @tensor_scalar_second_column() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %c = ncore.alloc : !ncore.tile<sbuf, 128x2xf32>
  // expected-error @+1 {{scalar1 must be a [128, 1] per-partition tile, got [128, 2] x f32 in sbuf}}
  ncore.tensor_scalar add %d, %d imm 1.0 then multiply with %c : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x2xf32>
}

// -----

ncore.program @tensor_reduce_alu() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{reduction must be add, max, min or multiply, got subtract}}
  ncore.tensor_reduce subtract %d, %s : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @tensor_reduce_shape() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x1xf32>
  %s = ncore.alloc : !ncore.tile<sbuf, 128x4x64xf32>
  // expected-error @+1 {{reducing the last free dim (64) of [128, 4, 64] x f32 in sbuf gives 128 x 4 elements, but dst is [128, 1] x f32 in sbuf}}
  ncore.tensor_reduce add %d, %s : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x4x64xf32>
}

// -----

ncore.program @affine_select_cmp() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x128xf32>
  // expected-error @+1 {{comparison must be is_ge or is_equal, got max}}
  ncore.affine_select max %d, %d base 0.0 partition_step 1.0 free_step -1.0 else 0.0 : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
}

// -----

ncore.program @loop_trips() {
  // expected-error @+1 {{trip count must be > 0, got 0}}
  ncore.loop %i trips 0 {
  }
}

// -----

ncore.program @loop_depth() {
  ncore.loop %a trips 2 {
    ncore.loop %b trips 2 {
      ncore.loop %c trips 2 {
        ncore.loop %d trips 2 {
          // expected-error @+1 {{nests 5 loops deep, at most 4 (program format)}}
          ncore.loop %e trips 2 {
          }
        }
      }
    }
  }
}

// -----

ncore.program @view_bounds(%x: !ncore.tile<hbm, 512x768xbf16>) {
  ncore.loop %i trips 5 {
    // expected-error @+1 {{window of dim 0 reaches index 639 (offset up to 512 + (128 - 1) x stride 1) but the source has 512}}
    %v = ncore.view %x[%i] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x768xbf16>
  }
}

// -----

ncore.program @view_negative(%x: !ncore.tile<hbm, 512x768xbf16>) {
  ncore.loop %i trips 2 {
    // expected-error @+1 {{offset of dim 1 reaches -64 (< 0) over the loop iterations}}
    %v = ncore.view %x[%i] offsets affine_map<(d0) -> (0, d0 * -64)> : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x64xbf16>
  }
}

// -----

ncore.program @view_nonlinear(%x: !ncore.tile<hbm, 512x768xbf16>) {
  ncore.loop %i trips 4 {
    // expected-error @+1 {{offset of dim 1 (d0 mod 2) must be linear in the induction variables (no mod, floordiv, ceildiv or products)}}
    %v = ncore.view %x[%i] offsets affine_map<(d0) -> (0, d0 mod 2)> : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x64xbf16>
  }
}

// -----

ncore.program @view_partition_iv() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  ncore.loop %i trips 4 {
    // expected-error @+1 {{partition offset of an sbuf view must be a constant (access patterns step bytes within a partition, not partitions)}}
    %v = ncore.view %t[%i] offsets affine_map<(d0) -> (d0 * 32, 0)> : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 32x64xf32>
  }
}

// -----

ncore.program @view_start() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{result starts at partition 64 (source start 0 + offset 64) but its type says 0}}
  %v = ncore.view %t offsets affine_map<() -> (64, 0)> : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 32x64xf32>
}

// -----

ncore.program @view_start_rule() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // A slice of more than 64 partitions cannot start at partition 32.
  // expected-error @+1 {{sbuf tile of 96 partitions starts at partition 32: a tile of more than 64 partitions must start at partition 0}}
  %v = ncore.view %t offsets affine_map<() -> (32, 0)> : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 96x64xf32, start = 32>
}

// -----

ncore.program @view_partition_stride() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{partition stride of an sbuf view must be 1, got 2}}
  %v = ncore.view %t offsets affine_map<() -> (0, 0)> strides [2, 1] : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 64x64xf32>
}

// -----

ncore.program @view_map() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{offsets map must take the 0 listed induction variables as dims (no symbols) and give 2 offsets, got affine_map<() -> (0)>}}
  %v = ncore.view %t offsets affine_map<() -> (0)> : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 64x64xf32>
}

// -----

ncore.program @view_strides_count() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{needs 2 strides, got 1}}
  %v = ncore.view %t offsets affine_map<() -> (0, 0)> strides [1] : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 64x64xf32>
}

// -----

ncore.program @view_space() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{view keeps the memory space, dtype and rank: [128, 64] x f32 in sbuf -> [128, 64] x bf16 in sbuf}}
  %v = ncore.view %t offsets affine_map<() -> (0, 0)> : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 128x64xbf16>
}

// -----

ncore.program @reshape_count(%x: !ncore.tile<hbm, 1x6x256x128xbf16>) {
  // expected-error @+1 {{reshape keeps the memory space, dtype and element count: [1, 6, 256, 128] x bf16 in hbm -> [1536, 64] x bf16 in hbm}}
  %f = ncore.reshape %x : !ncore.tile<hbm, 1x6x256x128xbf16> to !ncore.tile<hbm, 1536x64xbf16>
}

// -----

ncore.program @reshape_partitions() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{an on-chip reshape regroups free dims only and keeps the partitions: [128, 64] x f32 in sbuf -> [64, 128] x f32 in sbuf}}
  %f = ncore.reshape %t : !ncore.tile<sbuf, 128x64xf32> to !ncore.tile<sbuf, 64x128xf32>
}

// -----

ncore.program @alloc_bank_cross() {
  // expected-error @+1 {{psum tile of 2048 bytes per partition at offset 1024 crosses a 2048-byte PSUM bank boundary}}
  %p = ncore.alloc offset 1024 : !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @alloc_psum_end() {
  // expected-error @+1 {{psum tile at offset 16384 ends at byte 16896, beyond the 16384 bytes of a PSUM partition}}
  %p = ncore.alloc offset 16384 : !ncore.tile<psum, 128x128xf32>
}

// -----

ncore.program @alloc_offset() {
  // expected-error @+1 {{offset must be >= 0, got -4}}
  %p = ncore.alloc offset -4 : !ncore.tile<sbuf, 128x128xf32>
}

// -----

ncore.program @sem_range() {
  // expected-error @+1 {{semaphore 256 out of range [0, 256)}}
  ncore.sem_signal 256 on vector
}

// -----

ncore.program @sem_count() {
  // expected-error @+1 {{count must be >= 1, got 0}}
  ncore.sem_signal 3 count 0
}

// -----

ncore.program @sem_steps() {
  ncore.loop %i trips 4 {
    // expected-error @+1 {{has 2 steps but is inside 1 loops (one step per enclosing loop)}}
    ncore.sem_wait 3 ge 1 steps [1, 1] on vector
  }
}

// -----

ncore.program @all_gather_size(%x: !ncore.tile<hbm, 128x768xf32>, %g: !ncore.tile<hbm, 256x768xf32>) {
  // expected-error @+1 {{dst must hold 4 x 98304 elements ([128, 768] x f32 in hbm), got 196608 ([256, 768] x f32 in hbm)}}
  ncore.all_gather %g, %x ranks 4 : !ncore.tile<hbm, 256x768xf32>, !ncore.tile<hbm, 128x768xf32>
}

// -----

ncore.program @all_reduce_alu(%x: !ncore.tile<hbm, 128x768xf32>) {
  // expected-error @+1 {{reduction must be add, max, min or multiply, got divide}}
  ncore.all_reduce divide %x, %x ranks 4 : !ncore.tile<hbm, 128x768xf32>, !ncore.tile<hbm, 128x768xf32>
}

// -----

ncore.program @all_reduce_psum() {
  %p = ncore.alloc : !ncore.tile<psum, 128x512xf32>
  // expected-error @+1 {{collectives cannot access PSUM: dst is [128, 512] x f32 in psum}}
  ncore.all_reduce add %p, %p ranks 2 : !ncore.tile<psum, 128x512xf32>, !ncore.tile<psum, 128x512xf32>
}

// -----

ncore.program @all_reduce_ranks(%x: !ncore.tile<hbm, 128x768xf32>) {
  // expected-error @+1 {{ranks must be >= 1, got 0}}
  ncore.all_reduce add %x, %x ranks 0 : !ncore.tile<hbm, 128x768xf32>, !ncore.tile<hbm, 128x768xf32>
}

// -----

// expected-error @+1 {{argument #0 must be an hbm tile (a tensor bound at launch), got [128, 64] x f32 in sbuf}}
ncore.program @program_arg(%x: !ncore.tile<sbuf, 128x64xf32>) {
}

// -----

// expected-error @+1 {{argument #0 has unknown ncore.role 'weights' (expected input, output, param, constant or scratch)}}
ncore.program @program_role(%x: !ncore.tile<hbm, 128x64xf32> {ncore.role = "weights"}) {
}

// -----

// expected-error @+1 {{a program returns nothing (outputs are HBM arguments), got 1 results}}
ncore.program private @program_result(!ncore.tile<hbm, 128x64xf32>) -> !ncore.tile<hbm, 128x64xf32>

// -----

ncore.program @call_missing(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error @+1 {{'nope' does not name an ncore.program}}
  ncore.call_kernel @nope(%x) : !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program private @kern(!ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>)
ncore.program @call_types(%x: !ncore.tile<hbm, 128x64xf32>, %y: !ncore.tile<hbm, 128x64xbf16>) {
  // expected-error @+1 {{operand #1 is [128, 64] x bf16 in hbm but 'kern' expects [128, 64] x f32 in hbm}}
  ncore.call_kernel @kern(%x, %y) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xbf16>
}

// -----

ncore.program private @kern1(!ncore.tile<hbm, 128x64xf32>)
ncore.program @call_arity(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error @+1 {{'kern1' takes 1 tensors, got 2}}
  ncore.call_kernel @kern1(%x, %x) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}

// -----

ncore.program @call_sbuf() {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  // expected-error @+1 {{kernels take HBM tensors: operand #0 is [128, 64] x f32 in sbuf}}
  ncore.call_kernel @call_sbuf(%t) : !ncore.tile<sbuf, 128x64xf32>
}

// -----

ncore.program @inlined_types(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error @+1 {{operand #0 is [128, 64] x f32 in hbm but the body's argument is [64, 64] x f32 in hbm}}
  ncore.inlined_call @k(%x) : !ncore.tile<hbm, 128x64xf32> {
  ^bb0(%a: !ncore.tile<hbm, 64x64xf32>):
  }
}

// -----

ncore.program @inlined_arity(%x: !ncore.tile<hbm, 128x64xf32>) {
  // expected-error @+1 {{body takes 0 tensors, got 1}}
  ncore.inlined_call @k(%x) : !ncore.tile<hbm, 128x64xf32> {
  }
}

// -----

ncore.program @scalar_tensor_tensor_scalar() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{takes one scalar: an immediate (imm) or a [P, 1] tile}}
  ncore.scalar_tensor_tensor multiply %d, %d, %d : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @tensor_tensor_scan_initial() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{takes one initial value: an immediate (imm) or a [P, 1] tile}}
  ncore.tensor_tensor_scan multiply then add %d, %d, %d : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @tensor_tensor_scan_engine() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{cannot run on the gpsimd engine}}
  ncore.tensor_tensor_scan multiply then add %d, %d, %d imm 0.0 on gpsimd : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}

// -----

ncore.program @scalar_tensor_tensor_shape() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  %t = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  // expected-error @+1 {{dst and tensor must have the same partitions and free size}}
  ncore.scalar_tensor_tensor add %d, %d, %t imm 1.0 : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x256xf32>
}

// -----

ncore.program @scalar_tensor_tensor_engine() {
  %d = ncore.alloc : !ncore.tile<sbuf, 128x512xf32>
  // expected-error @+1 {{cannot run on the scalar engine (legal: vector, gpsimd)}}
  ncore.scalar_tensor_tensor add %d, %d, %d imm 1.0 on scalar : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
}
