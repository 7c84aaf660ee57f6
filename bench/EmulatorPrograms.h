//===- EmulatorPrograms.h - the emulator benchmark programs -----*- C++ -*-===//
//
// Hand-built ncore programs for bench/emulator_bench.cpp, shared with
// tests/runtime/PerfTest.cpp, which checks that they do what the benchmark
// says they do (right numbers, same timeline in both execution modes).
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_BENCH_EMULATORPROGRAMS_H
#define SEAM_BENCH_EMULATORPROGRAMS_H

#include "runtime/Host.h"
#include "runtime/Program.h"

#include <random>
#include <string>
#include <vector>

namespace seam::rt::bench {

/// K-tiled matmuls (bf16 128x128 stationary, 512 moving, one PSUM bank) and
/// a ScalarE evacuation per output tile, `tiles` output tiles, all in loops:
/// TE: loop tiles { loop kTiles { matmul } signal s0 }, SE: loop tiles {
/// activation after s0 > t; signal s1 }, TE tile t waits s1 >= t. No data
/// moves in or out (SBUF/PSUM only): the timing-only throughput program.
inline Program matmulLoop(uint32_t tiles, uint32_t kTiles) {
  ProgramBuilder b("matmul_loop", Target::Trn1);
  b.loopBegin(Engine::Tensor, tiles);
  b.loopBegin(Engine::Tensor, kTiles);
  Instruction mm = isa::matmul(psumTile(0, 128, 0, 512),
                               sbufTile(DType::BF16, 0, 128, 0, 128),
                               sbufTile(DType::BF16, 0, 128, 256, 512), true);
  mm.startLevel = 1;
  b.emit(mm.waitFor(1, 0, {1, 0}));
  b.loopEnd(Engine::Tensor);
  b.emit(isa::semSignal(0).onEngine(Engine::Tensor));
  b.loopEnd(Engine::Tensor);
  b.loopBegin(Engine::Scalar, tiles);
  b.emit(isa::activation(sbufTile(DType::F32, 0, 128, 4096, 512),
                         psumTile(0, 128, 0, 512), ActFunc::Identity)
             .waitFor(0, 1, {1})
             .signal(1));
  b.loopEnd(Engine::Scalar);
  return b.take();
}

/// Instructions matmulLoop issues (loop iterations counted).
inline uint64_t matmulLoopInstructions(uint32_t tiles, uint32_t kTiles) {
  return uint64_t(tiles) * kTiles + 2ull * tiles;
}

/// Y [m x n] = X [m x k] * W [k x n], the way a compiled linear runs: the
/// inputs are HBM bindings "xT" ([k, m], X transposed: K on partitions) and
/// "w" ([k, n]), f32 in HBM, loaded by one DMA each into bf16 SBUF; TE
/// multiplies 128-token x `nc`-column tiles, K accumulated in one fp32 PSUM
/// bank (start flag at k-tile 0); ScalarE evacuates each tile to bf16 SBUF;
/// one DMA stores "y" [m, n] (f32) at the end.
/// m and k must be multiples of 128, n a multiple of 128.
struct GemmShape {
  uint32_t m = 0, k = 0, n = 0;
  std::string name;
  double flops() const { return 2.0 * m * k * n; }
};

/// Output columns per tile: the widest of 512, 384, 256, 128 dividing n.
inline uint32_t gemmChunk(uint32_t n) {
  for (uint32_t c : {512u, 384u, 256u, 128u})
    if (n % c == 0)
      return c;
  return 0;
}

/// SBUF bytes per partition the program uses.
inline uint64_t gemmSbufBytes(const GemmShape &s) {
  uint64_t kt = s.k / 128, mt = s.m / 128;
  return 2 * (kt * s.m + kt * s.n + mt * s.n);
}

inline Program gemmProgram(const GemmShape &s, Target target = Target::Trn1) {
  const uint32_t kTiles = s.k / 128, mTiles = s.m / 128, nc = gemmChunk(s.n),
                 nTiles = s.n / nc;
  ProgramBuilder b("gemm_" + s.name, target);
  uint32_t xT = b.addBinding("xT", {s.k, s.m}, DType::F32, BindingRole::Input);
  uint32_t w = b.addBinding("w", {s.k, s.n}, DType::F32, BindingRole::Input);
  uint32_t y = b.addBinding("y", {s.m, s.n}, DType::F32, BindingRole::Output);
  // SBUF (bytes per partition): xT tiles [kTiles][m], w tiles [kTiles][n], y
  // [mTiles][n].
  const int64_t xOff = 0, wOff = xOff + 2 * int64_t(kTiles) * s.m,
                yOff = wOff + 2 * int64_t(kTiles) * s.n;

  // s0: loads done (2); s1: tiles multiplied; s2: tiles evacuated.
  b.emit(isa::dmaCopy(
             sbuf(DType::BF16, 0, 128, xOff, {{kTiles, s.m}, {s.m, 1}}),
             b.hbm(xT, 0, 128, s.m, {{kTiles, int64_t(128) * s.m}, {s.m, 1}}))
             .signal(0));
  b.emit(isa::dmaCopy(
             sbuf(DType::BF16, 0, 128, wOff, {{kTiles, s.n}, {s.n, 1}}),
             b.hbm(w, 0, 128, s.n, {{kTiles, int64_t(128) * s.n}, {s.n, 1}}))
             .signal(0));

  b.loopBegin(Engine::Tensor, mTiles);
  b.loopBegin(Engine::Tensor, nTiles);
  b.loopBegin(Engine::Tensor, kTiles);
  Instruction mm = isa::matmul(
      psumTile(0, 128, 0, nc),
      sbufTile(DType::BF16, 0, 128, xOff, 128).step(0, 128).step(2, s.m),
      sbufTile(DType::BF16, 0, 128, wOff, nc).step(1, nc).step(2, s.n),
      /*accumulate=*/true);
  mm.startLevel = 2;
  // The PSUM bank is free once SE evacuated the previous tile.
  b.emit(mm.waitFor(0, 2).waitFor(2, 0, {int32_t(nTiles), 1, 0}));
  b.loopEnd(Engine::Tensor);
  b.emit(isa::semSignal(1).onEngine(Engine::Tensor));
  b.loopEnd(Engine::Tensor);
  b.loopEnd(Engine::Tensor);

  b.loopBegin(Engine::Scalar, mTiles);
  b.loopBegin(Engine::Scalar, nTiles);
  b.emit(isa::activation(
             sbufTile(DType::BF16, 0, 128, yOff, nc).step(0, s.n).step(1, nc),
             psumTile(0, 128, 0, nc), ActFunc::Identity)
             .waitFor(1, 1, {int32_t(nTiles), 1})
             .signal(2));
  b.loopEnd(Engine::Scalar);
  b.loopEnd(Engine::Scalar);

  b.emit(isa::dmaCopy(
             b.hbm(y, 0, 128, s.n, {{mTiles, int64_t(128) * s.n}, {s.n, 1}}),
             sbuf(DType::BF16, 0, 128, yOff, {{mTiles, s.n}, {s.n, 1}}))
             .waitFor(2, mTiles * nTiles));
  return b.take();
}

/// The GEMMs the functional benchmark runs, by model: an fnet-base layer's
/// two linears (512 tokens, hidden 768, intermediate 3072) and a
/// flux2-klein single-stream block at a quarter of its width (768 tokens =
/// 256 image + 512 text, hidden 768, MLP 2304): the fused
/// to_q/to_k/to_v/proj_mlp linear and proj_out.
struct GemmCase {
  std::string model;
  GemmShape shape;
};
inline const std::vector<GemmCase> &benchmarkGemms() {
  static const std::vector<GemmCase> cases = {
      {"fnet-base layer", {512, 768, 3072, "intermediate_512x768x3072"}},
      {"fnet-base layer", {512, 3072, 768, "output_512x3072x768"}},
      {"flux2-klein single block @768",
       {768, 768, 4608, "qkv_mlp_768x768x4608"}},
      {"flux2-klein single block @768",
       {768, 3072, 768, "proj_out_768x3072x768"}},
  };
  return cases;
}

/// Uniform(-1, 1) inputs for gemmProgram: "xT" [k, m] and "w" [k, n].
inline TensorMap gemmInputs(const GemmShape &s, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  HostTensor x{{s.k, s.m}, std::vector<float>(size_t(s.k) * s.m)};
  HostTensor w{{s.k, s.n}, std::vector<float>(size_t(s.k) * s.n)};
  for (float &v : x.data)
    v = dist(gen);
  for (float &v : w.data)
    v = dist(gen);
  return {{"xT", std::move(x)}, {"w", std::move(w)}};
}

} // namespace seam::rt::bench

#endif // SEAM_BENCH_EMULATORPROGRAMS_H
