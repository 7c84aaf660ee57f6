// RUN: seam-opt %s -ncore-allocate -ncore-assign-engines -ncore-schedule -ncore-split-dma="min-piece-bytes=8192 min-store-piece-bytes=8192" -ncore-inline-calls -ncore-dump -o /dev/null | FileCheck %s
// RUN: rm -rf %t && seam-opt %s -ncore-allocate -ncore-assign-engines -ncore-schedule -ncore-inline-calls -ncore-emit=dir=%t -o /dev/null && ls %t | FileCheck %s --check-prefix=FILES

// FILES: caller.seamprg
// FILES: mm.seamprg
// FILES: scale.seamprg

// A K loop stays a loop: LoopBegin/LoopEnd in each stream with work inside,
// views of the loop iv become per-iteration byte steps, waits step with the
// iterations, signals ride on the producing instruction.
// CHECK-LABEL: program 'mm' target trn1
// CHECK: binding #0 param 'w' bf16[512x128]
// CHECK: binding #1 input 'x' bf16[512x256]
// CHECK: binding #2 output 'y' f32[128x256]
// CHECK: stream TE
// CHECK-NEXT: loop_begin x4
// CHECK-NEXT: matmul accumulate (start at i0=0) dst=psum<f32>(p0:128 +0B, [256:1]) src0=sbuf<bf16>(p0:128 +512B, [128:1]) src1=sbuf<bf16>(p0:128 +0B, [256:1]) wait(s4>=3+2*i0) signal(s0+=1)
// CHECK-NEXT: loop_end
// CHECK: stream SE
// CHECK-NEXT: tensor_copy {{.*}} wait(s0>=4) signal(s2+=1)
// ncore-split-dma (here with 8 KiB pieces) spread large transfers over the
// DMA queues by partition rows; the emitter translates each piece: the
// first one carries the waits (the DMA stream issues in order), the last
// one the signal.
// CHECK: stream DMA
// CHECK-NEXT: sem_signal signal(s4+=1)
// CHECK-NEXT: loop_begin x4
// CHECK-NEXT: dma_copy dst=sbuf<bf16>(p0:32 +512B, [128:1]) src0=hbm<bf16>(w +0B, rows 32 x 128, [128:1], loop step B [32768, 0, 0, 0]) wait(s4>=0+2*i0 carried 1) wait(s0>=0+1*i0 carried 1)
// CHECK-NEXT: dma_copy dst=sbuf<bf16>(p32:64 +512B, [128:1]) src0=hbm<bf16>(w +8192B,
// CHECK-NEXT: dma_copy dst=sbuf<bf16>(p64:96 +512B, [128:1]) src0=hbm<bf16>(w +16384B,
// CHECK-NEXT: dma_copy dst=sbuf<bf16>(p96:128 +512B, [128:1]) src0=hbm<bf16>(w +24576B, {{.*}} 0, 0, 0]) signal(s4+=1)
// CHECK-NEXT: dma_copy dst=sbuf<bf16>(p0:16 +0B, [256:1]) src0=hbm<bf16>(x +0B, rows 16 x 256, [256:1], loop step B [65536, 0, 0, 0]) wait(s4>=1+2*i0 carried 1)
// CHECK-COUNT-7: dma_copy dst=sbuf<bf16>(p{{[0-9]+}}:{{[0-9]+}} +0B, [256:1]) src0=hbm<bf16>(x
// CHECK-NEXT: loop_end
// Stores leave from the Sync engine's queue (ncore-schedule): one waiting
// for compute holds up no load behind it.
// CHECK: stream SYNC
// CHECK-NEXT: dma_copy dst=hbm<f32>(y +0B, rows 8 x 256, [256:1]) {{.*}} wait(s2>=1)

ncore.program @mm(%w: !ncore.tile<hbm, 512x128xbf16> {ncore.role = "param", ncore.name = "w"},
                  %x: !ncore.tile<hbm, 512x256xbf16> {ncore.role = "input", ncore.name = "x"},
                  %y: !ncore.tile<hbm, 128x256xf32> {ncore.role = "output", ncore.name = "y"}) {
  %wt = ncore.alloc : !ncore.tile<sbuf, 128x128xbf16>
  %xt = ncore.alloc : !ncore.tile<sbuf, 128x256xbf16>
  %acc = ncore.alloc : !ncore.tile<psum, 128x256xf32>
  %o = ncore.alloc : !ncore.tile<sbuf, 128x256xf32>
  ncore.loop %k trips 4 {
    %wv = ncore.view %w[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x128xbf16> to !ncore.tile<hbm, 128x128xbf16>
    ncore.dma_copy %wt, %wv : !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<hbm, 128x128xbf16>
    %xv = ncore.view %x[%k] offsets affine_map<(d0) -> (d0 * 128, 0)> : !ncore.tile<hbm, 512x256xbf16> to !ncore.tile<hbm, 128x256xbf16>
    ncore.dma_copy %xt, %xv : !ncore.tile<sbuf, 128x256xbf16>, !ncore.tile<hbm, 128x256xbf16>
    ncore.matmul %acc, %wt, %xt accumulate {start_level = 0 : i64} : !ncore.tile<psum, 128x256xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x256xbf16>
  }
  ncore.tensor_copy %o, %acc : !ncore.tile<sbuf, 128x256xf32>, !ncore.tile<psum, 128x256xf32>
  ncore.dma_copy %y, %o : !ncore.tile<hbm, 128x256xf32>, !ncore.tile<sbuf, 128x256xf32>
}

// A kernel call is inlined behind a full barrier: the last instruction of
// each engine before the call signals, and every engine's next instruction
// (the callee's first, then the caller's) waits for all of them. The callee's
// HBM arguments are the caller's operands (here rows 64.. of %y: +16384 B),
// its scratch gets a binding of its own, its semaphores are renumbered. The
// callee's SBUF tile (offset 0 in @scale) is moved to +256 B, clear of the
// caller's %a, which is live across the call (ncore.sbuf_base).
// CHECK-LABEL: program 'caller' target trn1
// CHECK: binding #0 input 'x' f32[128x64]
// CHECK: binding #1 output 'y' f32[192x64]
// CHECK: binding #2 scratch 'spill0' f32[128x64]
// CHECK: binding #3 scratch 'scale.tmp' f32[128x64]
// CHECK-NOT: stream TE
// CHECK: stream SE (5)
// CHECK-NEXT: activation exp {{.*}} wait(s4>=1) signal(s2+=1)
// CHECK-NEXT: sem_wait wait(s2>=1) wait(s4>=1) wait(s[[BS:[0-9]+]]>=1)
// CHECK-NEXT: tensor_scalar multiply 2 {{.*}} wait(s[[CD:[0-9]+]]>=1) signal(s[[CS:[0-9]+]]+=1)
// CHECK-NEXT: sem_wait wait(s[[CS]]>=1) wait(s[[BD:[0-9]+]]>=1) wait(s[[CY:[0-9]+]]>=1)
// CHECK-NEXT: tensor_scalar add 1 {{.*}} wait(s4>=2)
// CHECK: stream DMA (18)
// CHECK: dma_copy dst=sbuf<f32>(p96:128 +0B, [64:1]) src0=hbm<f32>(x +24576B, rows 32 x 64, [64:1]) signal(s4+=1)
// CHECK-NEXT: sem_wait wait(s2>=1) wait(s4>=1) wait(s[[BS]]>=1)
// CHECK-NEXT: dma_copy dst=sbuf<f32>(p0:32 +256B, [64:1]) src0=hbm<f32>(spill0 +0B,
// CHECK: dma_copy dst=sbuf<f32>(p96:128 +256B, [64:1]) src0=hbm<f32>(spill0 +24576B, {{.*}} signal(s[[CD]]+=1)
// CHECK-NEXT: dma_copy dst=hbm<f32>(y +16384B, {{.*}} src0=hbm<f32>(scale.tmp +0B, {{.*}} wait(s[[CY]]>=1)
// CHECK: dma_copy dst=hbm<f32>(y +40960B, {{.*}} src0=hbm<f32>(scale.tmp +24576B, {{.*}}]) signal(s[[BD]]+=1)
// CHECK-NEXT: sem_wait wait(s[[CS]]>=1) wait(s[[BD]]>=1) wait(s[[CY]]>=1)
// CHECK-NEXT: dma_copy dst=sbuf<f32>(p0:32 +0B, [64:1]) src0=hbm<f32>(y +16384B
// The callee's store to its scratch leaves from the Sync queue too.
// CHECK: stream SYNC (9)
// CHECK: dma_copy dst=hbm<f32>(spill0 +0B, {{.*}} wait(s2>=1)
// CHECK: dma_copy dst=hbm<f32>(spill0 +24576B, {{.*}}]) signal(s[[BS]]+=1)
// CHECK-NEXT: sem_wait wait(s2>=1) wait(s4>=1) wait(s[[BS]]>=1)
// CHECK-NEXT: dma_copy dst=hbm<f32>(scale.tmp +0B, {{.*}} wait(s[[CS]]>=1)
// CHECK: dma_copy dst=hbm<f32>(scale.tmp +24576B, {{.*}}]) signal(s[[CY]]+=1)
ncore.program private @scale(%i: !ncore.tile<hbm, 128x64xf32> {ncore.name = "in"},
                             %o: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output", ncore.name = "out"}) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %tmp = ncore.alloc {name = "tmp"} : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_scalar multiply %t, %t imm 2.0 on scalar : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %tmp, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %o, %tmp : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
}
ncore.program @caller(%x: !ncore.tile<hbm, 128x64xf32> {ncore.name = "x"},
                      %y: !ncore.tile<hbm, 192x64xf32> {ncore.role = "output", ncore.name = "y"}) {
  %a = ncore.alloc : !ncore.tile<sbuf, 128x64xf32>
  %s = ncore.alloc {name = "spill0"} : !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %a, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.activation exp %a, %a : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %s, %a : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  %y1 = ncore.view %y offsets affine_map<() -> (64, 0)> : !ncore.tile<hbm, 192x64xf32> to !ncore.tile<hbm, 128x64xf32>
  ncore.call_kernel @scale(%s, %y1) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %a, %y1 : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_scalar add %a, %a imm 1.0 on scalar : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
