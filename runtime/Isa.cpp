//===- Isa.cpp - Name tables generated from Isa.def -----------------------===//

#include "runtime/Isa.h"

namespace seam::rt {

std::string_view mnemonic(Opcode op) {
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, ...)                                \
  case Opcode::Name:                                                           \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

std::string_view name(Engine engine) {
  switch (engine) {
#define NCORE_ENGINE(Name, Code, Short)                                        \
  case Engine::Name:                                                           \
    return Short;
#include "runtime/Isa.def"
  }
  return "?";
}

std::string_view name(MemSpace space) {
  switch (space) {
#define NCORE_MEMSPACE(Name, Code, Mnemonic)                                   \
  case MemSpace::Name:                                                         \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

std::string_view name(DType type) {
  switch (type) {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  case DType::Name:                                                            \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

std::string_view name(ActFunc func) {
  switch (func) {
#define NCORE_ACT_FUNC(Name, Code, Mnemonic)                                   \
  case ActFunc::Name:                                                          \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

std::string_view name(AluOp op) {
  switch (op) {
#define NCORE_ALU_OP(Name, Code, Mnemonic)                                     \
  case AluOp::Name:                                                            \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

unsigned byteSize(DType type) {
  switch (type) {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  case DType::Name:                                                            \
    return Bytes;
#include "runtime/Isa.def"
  }
  return 0;
}

Engine defaultEngine(Opcode op) {
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, Eng, ...)                           \
  case Opcode::Name:                                                           \
    return Engine::Eng;
#include "runtime/Isa.def"
  }
  return Engine::Sync;
}

std::optional<Opcode> decodeOpcode(uint64_t code) {
  switch (code) {
#define NCORE_OPCODE(Name, Code, Mnemonic, ...)                                \
  case Code:                                                                   \
    return Opcode::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<Engine> decodeEngine(uint64_t code) {
  switch (code) {
#define NCORE_ENGINE(Name, Code, Short)                                        \
  case Code:                                                                   \
    return Engine::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<MemSpace> decodeMemSpace(uint64_t code) {
  switch (code) {
#define NCORE_MEMSPACE(Name, Code, Mnemonic)                                   \
  case Code:                                                                   \
    return MemSpace::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<DType> decodeDType(uint64_t code) {
  switch (code) {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  case Code:                                                                   \
    return DType::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<ActFunc> decodeActFunc(uint64_t code) {
  switch (code) {
#define NCORE_ACT_FUNC(Name, Code, Mnemonic)                                   \
  case Code:                                                                   \
    return ActFunc::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<AluOp> decodeAluOp(uint64_t code) {
  switch (code) {
#define NCORE_ALU_OP(Name, Code, Mnemonic)                                     \
  case Code:                                                                   \
    return AluOp::Name;
#include "runtime/Isa.def"
  default:
    return std::nullopt;
  }
}

std::optional<Opcode> parseOpcode(std::string_view text) {
#define NCORE_OPCODE(Name, Code, Mnemonic, ...)                                \
  if (text == Mnemonic)                                                        \
    return Opcode::Name;
#include "runtime/Isa.def"
  return std::nullopt;
}

std::optional<ActFunc> parseActFunc(std::string_view text) {
#define NCORE_ACT_FUNC(Name, Code, Mnemonic)                                   \
  if (text == Mnemonic)                                                        \
    return ActFunc::Name;
#include "runtime/Isa.def"
  return std::nullopt;
}

std::optional<AluOp> parseAluOp(std::string_view text) {
#define NCORE_ALU_OP(Name, Code, Mnemonic)                                     \
  if (text == Mnemonic)                                                        \
    return AluOp::Name;
#include "runtime/Isa.def"
  return std::nullopt;
}

std::optional<DType> parseDType(std::string_view text) {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  if (text == Mnemonic)                                                        \
    return DType::Name;
#include "runtime/Isa.def"
  return std::nullopt;
}

} // namespace seam::rt
