//===- NcoreDialect.cpp - ncore dialect, tile type, Isa.def tables --------===//
//
// The tile type's rules, and the link to runtime/Isa.def: the opcode table
// is read from it, and the TD enums are checked against it (codes at compile
// time, mnemonics when the dialect loads).
//
//===----------------------------------------------------------------------===//
#include "dialect/ncore/NcoreOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
// Header-only use: the program format's limits (no runtime library linked).
#include "runtime/Program.h"

using namespace mlir;
using namespace mlir::ncore;

#include "dialect/ncore/NcoreDialect.cpp.inc"
#include "dialect/ncore/NcoreEnums.cpp.inc"
#include "dialect/ncore/NcoreInterfaces.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialect/ncore/NcoreTypes.cpp.inc"

//===----------------------------------------------------------------------===//
// Isa.def: the one table
//===----------------------------------------------------------------------===//

// Every numeric code of the TD enums equals Isa.def's, and no TD enum has a
// case Isa.def lacks (counts agree; both are dense from 0).
#define NCORE_ENGINE(Name, Code, Short)                                        \
  static_assert(static_cast<uint32_t>(Engine::Name) == Code,                   \
                "Engine::" #Name " differs from runtime/Isa.def");
#include "runtime/Isa.def"
#define NCORE_MEMSPACE(Name, Code, Mnemonic)                                   \
  static_assert(static_cast<uint32_t>(MemSpace::Name) == Code,                 \
                "MemSpace::" #Name " differs from runtime/Isa.def");
#include "runtime/Isa.def"
#define NCORE_ACT_FUNC(Name, Code, Mnemonic)                                   \
  static_assert(static_cast<uint32_t>(ActFunc::Name) == Code,                  \
                "ActFunc::" #Name " differs from runtime/Isa.def");
#include "runtime/Isa.def"
#define NCORE_ALU_OP(Name, Code, Mnemonic)                                     \
  static_assert(static_cast<uint32_t>(AluOp::Name) == Code,                    \
                "AluOp::" #Name " differs from runtime/Isa.def");
#include "runtime/Isa.def"

static_assert(
    kMaxFreeDims == seam::rt::kMaxFreeDims &&
        kMaxLoopDepth == seam::rt::kMaxLoopDepth &&
        kNumSemaphores == seam::rt::kNumSemaphores,
    "ncore limits differ from the program format (runtime/Program.h)");

namespace {
constexpr uint64_t kIsaEngines = 0
#define NCORE_ENGINE(Name, Code, Short) +1
#include "runtime/Isa.def"
    ;
constexpr uint64_t kIsaMemSpaces = 0
#define NCORE_MEMSPACE(Name, Code, Mnemonic) +1
#include "runtime/Isa.def"
    ;
constexpr uint64_t kIsaActFuncs = 0
#define NCORE_ACT_FUNC(Name, Code, Mnemonic) +1
#include "runtime/Isa.def"
    ;
constexpr uint64_t kIsaAluOps = 0
#define NCORE_ALU_OP(Name, Code, Mnemonic) +1
#include "runtime/Isa.def"
    ;
} // namespace
static_assert(getMaxEnumValForEngine() + 1 == kIsaEngines,
              "Engine enum and runtime/Isa.def have different sizes");
static_assert(getMaxEnumValForMemSpace() + 1 == kIsaMemSpaces,
              "MemSpace enum and runtime/Isa.def have different sizes");
static_assert(getMaxEnumValForActFunc() + 1 == kIsaActFuncs,
              "ActFunc enum and runtime/Isa.def have different sizes");
static_assert(getMaxEnumValForAluOp() + 1 == kIsaAluOps,
              "AluOp enum and runtime/Isa.def have different sizes");

/// The textual forms must be Isa.def's mnemonics too (engines print the
/// lowercase of Isa.def's Name, since its short names "TE"/"VE" are for
/// dumps). Runs once per process when the dialect loads; a mismatch is a
/// build inconsistency, not bad IR, hence a fatal error.
static void checkMnemonicsAgainstIsaDef() {
  auto check = [](llvm::StringRef what, llvm::StringRef ours,
                  llvm::StringRef isa) {
    if (ours != isa)
      llvm::report_fatal_error(llvm::Twine("ncore ") + what + " '" + ours +
                               "' differs from runtime/Isa.def '" + isa + "'");
  };
#define NCORE_ENGINE(Name, Code, Short)                                        \
  check("engine", stringifyEngine(Engine::Name),                               \
        llvm::StringRef(#Name).lower());
#include "runtime/Isa.def"
#define NCORE_MEMSPACE(Name, Code, Mnemonic)                                   \
  check("memory space", stringifyMemSpace(MemSpace::Name), Mnemonic);
#include "runtime/Isa.def"
#define NCORE_ACT_FUNC(Name, Code, Mnemonic)                                   \
  check("activation function", stringifyActFunc(ActFunc::Name), Mnemonic);
#include "runtime/Isa.def"
#define NCORE_ALU_OP(Name, Code, Mnemonic)                                     \
  check("ALU op", stringifyAluOp(AluOp::Name), Mnemonic);
#include "runtime/Isa.def"
}

llvm::StringRef mlir::ncore::mnemonic(Opcode op) {
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, ...)                                \
  case Opcode::Name:                                                           \
    return Mnemonic;
#include "runtime/Isa.def"
  }
  return "?";
}

Engine mlir::ncore::defaultEngine(Opcode op) {
  switch (op) {
#define NCORE_OPCODE(Name, Code, Mnemonic, Eng, ...)                           \
  case Opcode::Name:                                                           \
    return Engine::Eng;
#include "runtime/Isa.def"
  }
  return Engine::Sync;
}

bool mlir::ncore::isLegalEngine(Opcode op, Engine engine) {
  return ::seam::rt::isLegalEngine(static_cast<::seam::rt::Opcode>(op),
                                   static_cast<::seam::rt::Engine>(engine));
}

std::optional<Opcode> mlir::ncore::opcodeForOpName(llvm::StringRef opName) {
  if (!opName.consume_front("ncore."))
    return std::nullopt;
  if (opName == "loop")
    return Opcode::LoopBegin;
  return llvm::StringSwitch<std::optional<Opcode>>(opName)
#define NCORE_OPCODE(Name, Code, Mnemonic, ...) .Case(Mnemonic, Opcode::Name)
#include "runtime/Isa.def"
      .Default(std::nullopt);
}

std::optional<unsigned> mlir::ncore::dtypeCode(Type t) {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  if ((Mnemonic == llvm::StringRef("f32") && t.isF32()) ||                     \
      (Mnemonic == llvm::StringRef("bf16") && t.isBF16()))                     \
    return Code;
#include "runtime/Isa.def"
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

void NcoreDialect::initialize() {
  checkMnemonicsAgainstIsaDef();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/ncore/NcoreTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/ncore/NcoreOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Tile type
//===----------------------------------------------------------------------===//

static std::string describeShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

std::string mlir::ncore::describeTile(Type type) {
  auto t = dyn_cast<TileType>(type);
  if (!t) {
    std::string s;
    llvm::raw_string_ostream(s) << type;
    return s;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << describeShape(t.getShape()) << " x " << t.getElementType() << " in "
     << stringifyMemSpace(t.getSpace());
  if (t.getStartPartition() != 0)
    os << ", start " << t.getStartPartition();
  return s;
}

int64_t TileType::getFreeElements() const {
  int64_t n = 1;
  for (int64_t d : getFreeShape())
    n *= d;
  return n;
}

int64_t TileType::getElementBytes() const {
#define NCORE_DTYPE(Name, Code, Mnemonic, Bytes)                               \
  if (dtypeCode(getElementType()) == unsigned(Code))                           \
    return Bytes;
#include "runtime/Isa.def"
  return 4;
}

TileType TileType::withShape(ArrayRef<int64_t> shape) const {
  return TileType::get(getContext(), getSpace(), shape, getElementType(),
                       getStartPartition());
}

TileType TileType::withStart(int64_t start) const {
  return TileType::get(getContext(), getSpace(), getShape(), getElementType(),
                       start);
}

LogicalResult
mlir::ncore::verifyTileType(function_ref<InFlightDiagnostic()> emitError,
                            MemSpace space, ArrayRef<int64_t> shape,
                            Type elementType, int64_t start) {
  llvm::StringRef spaceName = stringifyMemSpace(space);
  if (!dtypeCode(elementType))
    return emitError() << "tile dtype must be f32 or bf16, got " << elementType;
  if (shape.empty())
    return emitError() << "tile must have at least one dimension";
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "tile dimensions must be > 0, got "
                         << describeShape(shape);
  // Absurd sizes (and products that overflow int64) are refused here, before
  // anything sizes an allocation from them; the seam dialect's limit.
  constexpr int64_t kMaxTileElements = int64_t(1) << 36;
  int64_t elements = 1;
  for (int64_t d : shape)
    if (llvm::MulOverflow(elements, d, elements) || elements > kMaxTileElements)
      return emitError() << spaceName << " tile " << describeShape(shape)
                         << " has more than 2^36 elements: too large for any "
                            "device";
  if (space == MemSpace::Hbm) {
    if (start != 0)
      return emitError() << "an hbm tile has no start partition (got " << start
                         << ")";
    return success();
  }
  int64_t p = shape.front();
  if (shape.size() < 2)
    return emitError() << spaceName
                       << " tile must be [partitions] x [free dims], got "
                       << describeShape(shape);
  if (int64_t(shape.size()) - 1 > kMaxFreeDims)
    return emitError() << spaceName << " tile has " << shape.size() - 1
                       << " free dims, at most " << kMaxFreeDims;
  if (p > kNumPartitions)
    return emitError() << spaceName << " tile has " << p
                       << " partitions, at most " << kNumPartitions;
  if (start < 0 || start + p > kNumPartitions)
    return emitError() << spaceName << " tile of " << p
                       << " partitions starting at partition " << start
                       << " exceeds " << kNumPartitions << " partitions";
  if (p > kMaxOffsetPartitions && start != 0)
    return emitError() << spaceName << " tile of " << p
                       << " partitions starts at partition " << start
                       << ": a tile of more than " << kMaxOffsetPartitions
                       << " partitions must start at partition 0";
  if (space == MemSpace::Psum) {
    if (!elementType.isF32())
      return emitError() << "psum tile must be f32, got " << elementType;
    int64_t free = 1;
    for (int64_t d : shape.drop_front())
      free *= d;
    if (free * 4 > kPsumBankBytes)
      return emitError() << "psum tile free size " << free
                         << " x f32 = " << free * 4
                         << " bytes per partition exceeds one "
                         << kPsumBankBytes << "-byte PSUM bank ("
                         << kPsumBankBytes / 4 << " f32)";
  }
  return success();
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               MemSpace space, ArrayRef<int64_t> shape,
                               Type elementType, int64_t startPartition) {
  return verifyTileType(emitError, space, shape, elementType, startPartition);
}

/// !ncore.tile<sbuf, 128x512xbf16(, start = 64)?>
Type TileType::parse(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  llvm::StringRef spaceName;
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t start = 0;
  if (parser.parseLess() || parser.parseKeyword(&spaceName) ||
      parser.parseComma() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("start") || parser.parseEqual() ||
       parser.parseInteger(start)))
    return {};
  if (parser.parseGreater())
    return {};
  std::optional<MemSpace> space = symbolizeMemSpace(spaceName);
  if (!space) {
    parser.emitError(loc) << "unknown memory space '" << spaceName
                          << "' (expected hbm, sbuf or psum)";
    return {};
  }
  return TileType::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), *space, shape, elementType,
                              start);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyMemSpace(getSpace()) << ", ";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType();
  if (getStartPartition() != 0)
    printer << ", start = " << getStartPartition();
  printer << ">";
}
