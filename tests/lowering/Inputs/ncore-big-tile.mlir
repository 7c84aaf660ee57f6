// 200000 bytes per partition: more than trn1's SBUF (196608), less than trn2's (229376).
ncore.program @big(%x: !ncore.tile<hbm, 128x50000xf32>) {
  %t = ncore.alloc : !ncore.tile<sbuf, 128x50000xf32>
  ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x50000xf32>, !ncore.tile<hbm, 128x50000xf32>
}
