//===- FuzzProgramLoader.cpp - libFuzzer target: program file loader ------===//
//
// readProgram on the raw bytes (magic, sizes, checksum), and on a copy whose
// content hash and CRC are resealed so that mutations reach the validation
// of sections, bindings, constants, instructions and access patterns. An
// accepted program must survive dump, re-serialisation and re-reading, and
// -- when small enough to run quickly -- a launch on the emulated device in
// functional and timing-only mode: it may fault (reported), never crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/Host.h"
#include "runtime/Numerics.h"
#include "runtime/ProgramFile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace seam::rt;

namespace {
/// Dynamic instructions and bytes written, loops unrolled; saturates.
bool smallEnoughToRun(const Program &p) {
  if (p.hbmBytes() > (64u << 20))
    return false;
  double insts = 0, bytes = 0;
  for (const auto &stream : p.streams) {
    std::vector<double> trip{1.0};
    for (const Instruction &inst : stream) {
      if (inst.op == Opcode::LoopBegin) {
        trip.push_back(trip.back() * inst.tripCount);
        continue;
      }
      if (inst.op == Opcode::LoopEnd) {
        if (trip.size() > 1)
          trip.pop_back();
        continue;
      }
      insts += trip.back();
      for (unsigned s = 0; s < Instruction::NumSlots; ++s)
        if (inst.has(static_cast<Instruction::Slot>(s)))
          bytes += trip.back() *
                   double(inst.ap(static_cast<Instruction::Slot>(s)).bytes());
    }
  }
  return insts <= 20000 && bytes <= double(256u << 20);
}

void run(const Program &p, ExecMode mode) {
  DeviceOptions opts;
  opts.mode = mode;
  opts.cores = 2;
  opts.collectEvents = false;
  Device dev(Profile::builtin(p.target), opts);
  auto id = dev.loadProgram(p);
  if (!id)
    return;
  auto r = dev.launch(*id);
  if (r && r->fault)
    (void)r->fault->str();
}

void check(const std::vector<uint8_t> &bytes) {
  Expected<Program> p = readProgram(bytes);
  if (!p) {
    if (p.error().empty()) {
      std::fprintf(stderr, "readProgram failed with an empty message\n");
      std::abort();
    }
    return;
  }
  std::ostringstream os;
  dumpProgram(*p, os);
  (void)programHash(*p);
  std::vector<uint8_t> again = writeProgram(*p);
  Expected<Program> back = readProgram(again);
  if (!back) {
    std::fprintf(stderr, "accepted program does not re-read: %s\n",
                 back.error().c_str());
    std::abort();
  }
  if (smallEnoughToRun(*p)) {
    run(*p, ExecMode::Functional);
    run(*p, ExecMode::TimingOnly);
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  check(bytes);
  if (size > kProgramHeaderSize) {
    resealProgramFile(bytes);
    check(bytes);
  }
  return 0;
}
