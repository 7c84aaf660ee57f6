//===- TestUtil.h - Helpers for runtime tests -------------------*- C++ -*-===//

#ifndef SEAM_TESTS_RUNTIME_TESTUTIL_H
#define SEAM_TESTS_RUNTIME_TESTUTIL_H

#include "runtime/Host.h"
#include "runtime/Numerics.h"
#include "runtime/Program.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace seam::rt::test {

inline double relL2(const std::vector<float> &got,
                    const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = got[i] - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

inline std::vector<float> randomValues(size_t n, unsigned seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// A straight-line single-core program: inputs are DMA'd HBM -> SBUF, then
/// the ops run one after another, then outputs are DMA'd SBUF -> HBM. Every
/// instruction signals semaphore 0 and waits for all earlier ones, so the
/// sequence is fully ordered whatever engines it uses.
class TileProgram {
public:
  explicit TileProgram(Target target = Target::Trn1, std::string name = "tile")
      : builder(std::move(name), target) {}

  /// Binding `name` [p, f] in HBM, copied into SBUF at `sbufOffset`.
  AccessPattern input(const std::string &name, uint32_t p, uint32_t f,
                      std::vector<float> values, DType sbufType = DType::F32,
                      int64_t sbufOffset = 0, DType hbmType = DType::F32) {
    uint32_t b = builder.addBinding(name, {p, f}, hbmType, BindingRole::Input);
    inputs[name] = HostTensor{{p, f}, std::move(values)};
    AccessPattern dst = sbufTile(sbufType, 0, p, sbufOffset, f);
    add(isa::dmaCopy(dst, builder.hbm(b, 0, p, f, {{f, 1}})));
    return dst;
  }

  /// Declares output `name` [p, f] copied from `src` (SBUF) at the end.
  void output(const std::string &name, const AccessPattern &src,
              DType hbmType = DType::F32) {
    uint32_t p = src.partitions, f = static_cast<uint32_t>(src.freeElements());
    uint32_t b = builder.addBinding(name, {p, f}, hbmType, BindingRole::Output);
    pendingOutputs.push_back({b, src});
  }

  uint32_t add(Instruction inst) {
    if (count > 0)
      inst.waitFor(0, count);
    inst.signal(0, 1);
    ++count;
    return builder.emit(inst);
  }

  Program finish() {
    for (auto &[b, src] : pendingOutputs) {
      uint32_t p = src.partitions,
               f = static_cast<uint32_t>(src.freeElements());
      add(isa::dmaCopy(builder.hbm(b, 0, p, f, {{f, 1}}), src));
    }
    pendingOutputs.clear();
    return builder.take();
  }

  /// Runs the program functionally on trn1/trn2 and returns the result.
  LaunchResult run(ExecMode mode = ExecMode::Functional,
                   bool verifyOnLoad = true) {
    Program p = finish();
    DeviceOptions opts;
    opts.mode = mode;
    opts.cores = 1;
    opts.verifyOnLoad = verifyOnLoad;
    Device device(Profile::builtin(p.target), opts);
    auto id = device.loadProgram(p);
    EXPECT_TRUE(bool(id)) << id.error();
    if (!id)
      return {};
    auto res = device.launch(*id, inputs);
    EXPECT_TRUE(bool(res)) << res.error();
    return res ? *res : LaunchResult{};
  }

  ProgramBuilder builder;
  TensorMap inputs;

private:
  std::vector<std::pair<uint32_t, AccessPattern>> pendingOutputs;
  uint32_t count = 0;
};

inline const std::vector<float> &out(const LaunchResult &r,
                                     const std::string &name) {
  static const std::vector<float> empty;
  if (r.outputs.empty() || !r.outputs[0].count(name))
    return empty;
  return r.outputs[0].at(name).data;
}

} // namespace seam::rt::test

#endif // SEAM_TESTS_RUNTIME_TESTUTIL_H
