//===- FunctionalMemory.cpp - Memories and operand access -----------------===//

#include "runtime/Functional.h"
#include "runtime/Numerics.h"

#include <cmath>
#include <cstring>

namespace seam::rt {

std::vector<float> seededValues(const Constant &c, uint64_t count) {
  std::vector<float> values(count);
  uint64_t state = c.seed;
  auto uniform01 = [&]() {
    return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
  };
  if (c.kind == ConstantKind::SeededUniform) {
    for (float &v : values)
      v = static_cast<float>((2.0 * uniform01() - 1.0) * c.scale);
  } else {
    for (uint64_t i = 0; i < count; i += 2) {
      double u1 = std::max(uniform01(), 1e-300), u2 = uniform01();
      double r = std::sqrt(-2.0 * std::log(u1));
      values[i] = static_cast<float>(r * std::cos(2 * M_PI * u2) * c.scale);
      if (i + 1 < count)
        values[i + 1] =
            static_cast<float>(r * std::sin(2 * M_PI * u2) * c.scale);
    }
  }
  return values;
}

FunctionalMachine::FunctionalMachine(const Profile &profile, unsigned numCores)
    : profile(profile), limits(profile.memoryLimits()) {
  cores.resize(numCores);
  unsigned perChip = std::max(1u, profile.coresPerChip);
  for (unsigned c = 0; c < numCores; ++c)
    cores[c].chip = c / perChip;
  hbm.resize(numCores / perChip + 1);
}

void FunctionalMachine::bind(unsigned core, const Program *program,
                             uint64_t hbmBase) {
  CoreMemory &m = cores.at(core);
  if (m.sbuf.empty()) { // SBUF and PSUM are allocated when a core is used.
    m.sbuf.grow(limits.partitions * limits.sbufPartitionBytes);
    m.psum.grow(limits.partitions * limits.psumPartitionBytes);
    m.psumWritten.grow(m.psum.size() / 4);
  }
  m.program = program;
  m.hbmBase = hbmBase;
  auto &chipHbm = hbm[m.chip];
  uint64_t end = hbmBase + program->hbmBytes();
  chipHbm.grow(end);
}

void FunctionalMachine::resetPsumState() {
  for (CoreMemory &m : cores)
    m.psumWritten.zero();
}

void FunctionalMachine::initConstant(unsigned core, const Constant &c) {
  const CoreMemory &m = cores.at(core);
  const Binding &b = m.program->bindings.at(c.binding);
  if (c.kind == ConstantKind::Raw) {
    // A binding may hold no element (a zero dimension is legal): its raw
    // constant is empty and `bytes.data()` may be null, which memcpy does
    // not accept even for zero bytes.
    uint64_t n = std::min<uint64_t>(c.bytes.size(), b.hbmSize);
    if (n == 0)
      return;
    std::memcpy(hbm[m.chip].data() + m.hbmBase + b.hbmOffset, c.bytes.data(),
                n);
    return;
  }
  std::vector<float> values = seededValues(c, b.numElements());
  writeBinding(core, c.binding, values.data(), values.size());
}

void FunctionalMachine::writeBinding(unsigned core, uint32_t binding,
                                     const float *values, uint64_t count) {
  const CoreMemory &m = cores.at(core);
  const Binding &b = m.program->bindings.at(binding);
  uint8_t *dst = hbm[m.chip].data() + m.hbmBase + b.hbmOffset;
  unsigned size = byteSize(b.dtype);
  count = std::min(count, b.numElements());
  for (uint64_t i = 0; i < count; ++i)
    storeElement(dst + i * size, b.dtype, values[i]);
}

std::vector<float> FunctionalMachine::readBinding(unsigned core,
                                                  uint32_t binding) const {
  const CoreMemory &m = cores.at(core);
  const Binding &b = m.program->bindings.at(binding);
  const uint8_t *src = hbm[m.chip].data() + m.hbmBase + b.hbmOffset;
  unsigned size = byteSize(b.dtype);
  std::vector<float> values(b.numElements());
  for (uint64_t i = 0; i < values.size(); ++i)
    values[i] = loadElement(src + i * size, b.dtype);
  return values;
}

Status FunctionalMachine::resolve(unsigned core, const AccessPattern &ap,
                                  const uint32_t *iters, unsigned depth,
                                  ResolvedAccess &out) {
  CoreMemory &m = cores[core];
  AccessPattern a = ap;
  for (unsigned d = 0; d < depth && d < kMaxLoopDepth; ++d)
    a.offset += static_cast<int64_t>(iters[d]) * ap.loopStep[d];
  if (Status access = checkAccess(*m.program, a, limits, nullptr, 0); !access)
    return access;
  int64_t elem = byteSize(a.dtype);
  out.space = a.space;
  out.dtype = a.dtype;
  out.core = core;
  out.partitions = a.partitions;
  // Free element offsets, row-major over the free dims.
  uint64_t f = a.freeElements();
  out.freeOffsets.resize(f);
  std::array<uint32_t, kMaxFreeDims> idx{};
  int64_t offset = 0;
  for (uint64_t i = 0; i < f; ++i) {
    out.freeOffsets[i] = offset * elem;
    for (int d = a.numDims - 1; d >= 0; --d) {
      offset += a.dims[d].stride;
      if (++idx[d] < a.dims[d].size)
        break;
      offset -= static_cast<int64_t>(a.dims[d].size) * a.dims[d].stride;
      idx[d] = 0;
    }
  }
  out.contiguous = true;
  for (uint64_t i = 0; i < f && out.contiguous; ++i)
    out.contiguous = out.freeOffsets[i] == static_cast<int64_t>(i) * elem;
  out.rows.resize(a.partitions);
  for (unsigned p = 0; p < a.partitions; ++p) {
    switch (a.space) {
    case MemSpace::Sbuf:
      out.rows[p] = m.sbuf.data() +
                    (a.partitionStart + p) * limits.sbufPartitionBytes +
                    a.offset;
      break;
    case MemSpace::Psum:
      out.rows[p] = m.psum.data() +
                    (a.partitionStart + p) * limits.psumPartitionBytes +
                    a.offset;
      break;
    case MemSpace::Hbm:
      out.rows[p] = hbm[m.chip].data() + m.hbmBase +
                    m.program->bindings[a.binding].hbmOffset + a.offset +
                    static_cast<int64_t>(p) * a.partitionStride * elem;
      break;
    }
  }
  return Status::ok();
}

void FunctionalMachine::load(const ResolvedAccess &a,
                             std::vector<float> &values) const {
  size_t f = a.freeSize();
  values.resize(a.partitions * f);
  if (values.empty()) // nothing to copy; values.data() may be null
    return;
  for (unsigned p = 0; p < a.partitions; ++p) {
    float *out = values.data() + p * f;
    if (a.contiguous && a.dtype == DType::F32) {
      std::memcpy(out, a.rows[p], f * 4);
      continue;
    }
    if (a.contiguous && a.dtype == DType::BF16) {
      const uint8_t *row = a.rows[p];
      for (size_t i = 0; i < f; ++i) {
        uint16_t h;
        std::memcpy(&h, row + 2 * i, 2);
        out[i] = bf16BitsToFloat(h);
      }
      continue;
    }
    for (size_t i = 0; i < f; ++i)
      out[i] = loadElement(a.rows[p] + a.freeOffsets[i], a.dtype);
  }
}

void FunctionalMachine::store(const ResolvedAccess &a, const float *values) {
  size_t f = a.freeSize();
  if (f == 0) // nothing to store; `values` may be null
    return;
  for (unsigned p = 0; p < a.partitions; ++p) {
    const float *row = values + p * f;
    for (size_t i = 0; i < f; ++i)
      nonFinite += !std::isfinite(row[i]);
    if (a.contiguous && a.dtype == DType::F32) {
      std::memcpy(a.rows[p], row, f * 4);
      continue;
    }
    for (size_t i = 0; i < f; ++i)
      storeElement(a.rows[p] + a.freeOffsets[i], a.dtype, row[i]);
  }
  if (a.space == MemSpace::Psum)
    markPsum(a);
}

void FunctionalMachine::markPsum(const ResolvedAccess &a) {
  CoreMemory &m = cores[a.core];
  unsigned size = byteSize(a.dtype);
  if (a.contiguous && size == 4) {
    for (unsigned p = 0; p < a.partitions; ++p) {
      size_t word = static_cast<size_t>(a.rows[p] - m.psum.data()) / 4;
      std::memset(m.psumWritten.data() + word, 1, a.freeSize());
    }
    return;
  }
  for (unsigned p = 0; p < a.partitions; ++p)
    for (int64_t off : a.freeOffsets) {
      size_t byte = static_cast<size_t>(a.rows[p] + off - m.psum.data());
      for (size_t w = byte / 4; w <= (byte + size - 1) / 4; ++w)
        m.psumWritten[w] = 1;
    }
}

bool FunctionalMachine::psumInitialised(unsigned core,
                                        const ResolvedAccess &a) const {
  const CoreMemory &m = cores[core];
  for (unsigned p = 0; p < a.partitions; ++p)
    for (int64_t off : a.freeOffsets) {
      size_t byte = static_cast<size_t>(a.rows[p] + off - m.psum.data());
      if (!m.psumWritten[byte / 4])
        return false;
    }
  return true;
}

} // namespace seam::rt
