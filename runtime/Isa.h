//===- Isa.h - Enums and name tables generated from Isa.def ----*- C++ -*-===//
//
// Every enum of the emulated NeuronCore ISA comes from the one X-macro table
// in Isa.def, so the emitter, the file decoder and the executors agree on what
// each numeric code means.
//
//===----------------------------------------------------------------------===//

#ifndef SEAM_RUNTIME_ISA_H
#define SEAM_RUNTIME_ISA_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace seam::rt {

enum class Opcode : uint8_t {
#define NCORE_OPCODE(Name, Code, ...) Name = Code,
#include "runtime/Isa.def"
};

enum class Engine : uint8_t {
#define NCORE_ENGINE(Name, Code, Short) Name = Code,
#include "runtime/Isa.def"
};

enum class MemSpace : uint8_t {
#define NCORE_MEMSPACE(Name, Code, Mnemonic) Name = Code,
#include "runtime/Isa.def"
};

enum class DType : uint8_t {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes) Name = Code,
#include "runtime/Isa.def"
};

enum class ActFunc : uint8_t {
#define NCORE_ACT_FUNC(Name, Code, Mnemonic) Name = Code,
#include "runtime/Isa.def"
};

enum class AluOp : uint8_t {
#define NCORE_ALU_OP(Name, Code, Mnemonic) Name = Code,
#include "runtime/Isa.def"
};

/// Number of engine codes (engine codes are dense from 0).
constexpr unsigned kNumEngines = 0
#define NCORE_ENGINE(Name, Code, Short) +1
#include "runtime/Isa.def"
    ;

/// The masks Isa.def's NCORE_OPCODE rows are written in: engines (bit =
/// engine code) and operand slots (bit = Instruction::Slot, Program.h).
namespace isadef {
constexpr unsigned TE = 1u << static_cast<unsigned>(Engine::Tensor);
constexpr unsigned VE = 1u << static_cast<unsigned>(Engine::Vector);
constexpr unsigned SE = 1u << static_cast<unsigned>(Engine::Scalar);
constexpr unsigned GP = 1u << static_cast<unsigned>(Engine::GpSimd);
constexpr unsigned DMA = 1u << static_cast<unsigned>(Engine::Dma);
constexpr unsigned SYNC = 1u << static_cast<unsigned>(Engine::Sync);
constexpr unsigned CC = 1u << static_cast<unsigned>(Engine::Collective);
constexpr unsigned ANY = (1u << kNumEngines) - 1;
constexpr unsigned Dst = 1u << 0, Src0 = 1u << 1, Src1 = 1u << 2, Aux = 1u << 3;
} // namespace isadef

/// Engines `op` may run on (a mask of isadef::TE, ...), from Isa.def.
constexpr unsigned legalEngines(Opcode op) {
  using namespace isadef;
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, Engine, Engines, ...)               \
  case Opcode::Name:                                                           \
    return Engines;
#include "runtime/Isa.def"
  }
  return 0;
}
constexpr bool isLegalEngine(Opcode op, Engine engine) {
  return legalEngines(op) & (1u << static_cast<unsigned>(engine));
}
/// Operand slots `op` must have (a mask of isadef::Dst, ...), from Isa.def.
constexpr unsigned requiredSlots(Opcode op) {
  using namespace isadef;
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, Engine, Engines, Required, ...)     \
  case Opcode::Name:                                                           \
    return Required;
#include "runtime/Isa.def"
  }
  return 0;
}
/// Operand slots `op` may have: the required ones and the optional ones.
constexpr unsigned allowedSlots(Opcode op) {
  using namespace isadef;
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, Engine, Engines, Required,          \
                     Optional)                                                 \
  case Opcode::Name:                                                           \
    return (Required) | (Optional);
#include "runtime/Isa.def"
  }
  return 0;
}

/// Name tables. Each returns "?" for a code that is not in Isa.def.
std::string_view mnemonic(Opcode op);
std::string_view name(Engine engine);
std::string_view name(MemSpace space);
std::string_view name(DType type);
std::string_view name(ActFunc func);
std::string_view name(AluOp op);
unsigned byteSize(DType type);
/// The engine an opcode runs on unless the scheduler moves it.
Engine defaultEngine(Opcode op);

/// Decoders: raw numeric code -> enum, or nullopt when the code is unknown.
std::optional<Opcode> decodeOpcode(uint64_t code);
std::optional<Engine> decodeEngine(uint64_t code);
std::optional<MemSpace> decodeMemSpace(uint64_t code);
std::optional<DType> decodeDType(uint64_t code);
std::optional<ActFunc> decodeActFunc(uint64_t code);
std::optional<AluOp> decodeAluOp(uint64_t code);

/// Parsers from mnemonics (for text formats and tools).
std::optional<Opcode> parseOpcode(std::string_view text);
std::optional<ActFunc> parseActFunc(std::string_view text);
std::optional<AluOp> parseAluOp(std::string_view text);
std::optional<DType> parseDType(std::string_view text);

} // namespace seam::rt

#endif // SEAM_RUNTIME_ISA_H
