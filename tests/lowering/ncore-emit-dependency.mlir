// RUN: seam-opt %s -ncore-assign-engines -ncore-schedule -ncore-inline-calls -ncore-dump -o /dev/null | FileCheck %s

// The dependency boundary, emitted: the body's first load waits for the
// caller's store of its input (sync) and for the scalar engine that last
// wrote the SBUF bytes it refills, not for every engine; the caller's load
// from %w after the call waits for nothing; the load of the call's output
// waits for the body's last DMA (the exit signal it was given).
// CHECK-LABEL: program 'dependency'
// CHECK: stream SE (2)
// CHECK-NEXT: 0 activation exp {{.*}} signal(s2+=1)
// CHECK-NEXT: 1 tensor_scalar multiply {{.*}} wait(s6>=1) wait(s2>=1) wait(s5>=1) signal(s7+=1)
// CHECK: stream DMA (5)
// CHECK-NEXT: 0 dma_copy {{.*}}arg0{{.*}} signal(s4+=1)
// CHECK-NEXT: 1 dma_copy {{.*}}src0=hbm<f32>(a +0B{{.*}} wait(s2>=1) wait(s5>=1) signal(s6+=1)
// CHECK-NEXT: 2 dma_copy dst=hbm<f32>(b +0B{{.*}} wait(s7>=1) signal(s8+=1)
// CHECK-NEXT: 3 dma_copy {{.*}}src0=hbm<f32>(arg1 +0B, rows 128 x 64, [64:1]) signal(s4+=1)
// CHECK-NEXT: 4 dma_copy {{.*}}src0=hbm<f32>(b +0B{{.*}} wait(s8>=1) wait(s4>=1) wait(s2>=1) signal(s4+=1)
// CHECK: stream SYNC (2)
// CHECK-NEXT: 0 dma_copy dst=hbm<f32>(a +0B{{.*}} wait(s2>=1) signal(s5+=1)
ncore.program private @scale(%i: !ncore.tile<hbm, 128x64xf32>,
                             %o: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"}) attributes {ncore.psum_extent = 0 : i64, ncore.sbuf_extent = 256 : i64} {
  %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.sem_signal 7 on dma
  ncore.sem_wait 7 ge 1 on scalar
  ncore.tensor_scalar multiply %t, %t imm 2.0 on scalar : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.sem_signal 3 on scalar
  ncore.sem_wait 3 ge 1 on dma
  ncore.dma_copy %o, %t : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
ncore.program @dependency(%x: !ncore.tile<hbm, 128x64xf32>, %w: !ncore.tile<hbm, 128x64xf32>,
                          %y: !ncore.tile<hbm, 128x64xf32> {ncore.role = "output"}) {
  %a = ncore.alloc offset 0 {name = "a"} : !ncore.tile<hbm, 128x64xf32>
  %b = ncore.alloc offset 32768 {name = "b"} : !ncore.tile<hbm, 128x64xf32>
  %t = ncore.alloc offset 0 : !ncore.tile<sbuf, 128x64xf32>
  %u = ncore.alloc offset 1024 : !ncore.tile<sbuf, 128x64xf32>
  %v = ncore.alloc offset 2048 : !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.activation exp %u, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %a, %u : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.call_kernel @scale(%a, %b) {ncore.boundary = "dependency", ncore.sbuf_base = 1024 : i64} : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %v, %w : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.dma_copy %t, %b : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
  ncore.tensor_tensor add %v, %v, %t : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
  ncore.dma_copy %y, %v : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<sbuf, 128x64xf32>
}
