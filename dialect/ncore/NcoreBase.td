//===- NcoreBase.td - ncore dialect, enums, tile type, interface -*- tablegen -*-===//
//
// The enums mirror runtime/Isa.def (the one ISA table shared with the
// runtime): NcoreDialect.cpp static_asserts every numeric code and checks
// every mnemonic against that table, so a code cannot mean two things.
//
//===----------------------------------------------------------------------===//

#ifndef NCORE_BASE_TD
#define NCORE_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Ncore_Dialect : Dialect {
  let name = "ncore";
  let cppNamespace = "::mlir::ncore";
  let summary = "ISA-level dialect of the emulated NeuronCore";
  let description = [{
    One op per instruction kind of runtime/Isa.def, on tiles in HBM, SBUF or
    PSUM (`!ncore.tile`). Instructions take their destination tile as an
    operand (destination-passing style, as the ISA does) and verify the
    hardware rules of reference/hardware.md.
  }];
  let useDefaultTypePrinterParser = 1;
  let usePropertiesForAttributes = 1;
}

//===----------------------------------------------------------------------===//
// Enums (codes = runtime/Isa.def; checked in NcoreDialect.cpp)
//===----------------------------------------------------------------------===//

def Ncore_Engine : I32EnumAttr<"Engine", "engine of a NeuronCore (Isa.def NCORE_ENGINE)", [
      I32EnumAttrCase<"Tensor", 0, "tensor">,
      I32EnumAttrCase<"Vector", 1, "vector">,
      I32EnumAttrCase<"Scalar", 2, "scalar">,
      I32EnumAttrCase<"GpSimd", 3, "gpsimd">,
      I32EnumAttrCase<"Dma", 4, "dma">,
      I32EnumAttrCase<"Sync", 5, "sync">,
      I32EnumAttrCase<"Collective", 6, "collective">
    ]> {
  let cppNamespace = "::mlir::ncore";
}

def Ncore_MemSpace : I32EnumAttr<"MemSpace", "memory space (Isa.def NCORE_MEMSPACE)", [
      I32EnumAttrCase<"Hbm", 0, "hbm">,
      I32EnumAttrCase<"Sbuf", 1, "sbuf">,
      I32EnumAttrCase<"Psum", 2, "psum">
    ]> {
  let cppNamespace = "::mlir::ncore";
}

def Ncore_ActFunc : I32EnumAttr<"ActFunc",
    "Scalar-engine activation function (Isa.def NCORE_ACT_FUNC)", [
      I32EnumAttrCase<"Identity", 0, "identity">,
      I32EnumAttrCase<"Exp", 1, "exp">,
      I32EnumAttrCase<"Gelu", 2, "gelu">,
      I32EnumAttrCase<"GeluTanh", 3, "gelu_tanh">,
      I32EnumAttrCase<"Silu", 4, "silu">,
      I32EnumAttrCase<"Tanh", 5, "tanh">,
      I32EnumAttrCase<"Sigmoid", 6, "sigmoid">,
      I32EnumAttrCase<"Relu", 7, "relu">,
      I32EnumAttrCase<"Rsqrt", 8, "rsqrt">,
      I32EnumAttrCase<"Square", 9, "square">,
      I32EnumAttrCase<"Sqrt", 10, "sqrt">,
      I32EnumAttrCase<"Sin", 11, "sin">,
      I32EnumAttrCase<"Cos", 12, "cos">
    ]> {
  let cppNamespace = "::mlir::ncore";
}

def Ncore_AluOp : I32EnumAttr<"AluOp",
    "Vector-engine binary operation (Isa.def NCORE_ALU_OP)", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"Subtract", 1, "subtract">,
      I32EnumAttrCase<"Multiply", 2, "multiply">,
      I32EnumAttrCase<"Max", 3, "max">,
      I32EnumAttrCase<"Min", 4, "min">,
      I32EnumAttrCase<"Divide", 5, "divide">,
      I32EnumAttrCase<"Bypass", 6, "bypass">,
      I32EnumAttrCase<"IsEqual", 7, "is_equal">,
      I32EnumAttrCase<"IsGe", 8, "is_ge">
    ]> {
  let cppNamespace = "::mlir::ncore";
}

//===----------------------------------------------------------------------===//
// Tile type
//===----------------------------------------------------------------------===//

def Ncore_TileType : TypeDef<Ncore_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "a buffer in HBM, SBUF or PSUM";
  let description = [{
    `!ncore.tile<space, PxF1x...xdtype>` with `dtype` f32 or bf16. In SBUF and
    PSUM the first dimension is the partition dimension (P <= 128) and the
    rest are free dimensions (at most 4, walked row-major); `start = s` gives
    the first partition of a partition slice (default 0). In HBM the shape is
    the tensor's shape and the first dimension plays the role of partitions
    when a DMA moves it on chip.

    ```mlir
    !ncore.tile<hbm, 4096x768xbf16>
    !ncore.tile<sbuf, 128x512xbf16>
    !ncore.tile<sbuf, 32x512xbf16, start = 64>
    !ncore.tile<psum, 128x512xf32>
    ```

    Rules (also re-checked by every op's verifier, for IR built in C++):
    P <= 128 and start + P <= 128; a tile of more than 64 partitions starts at
    partition 0; PSUM holds f32 only and a PSUM tile fits one 2 KiB bank per
    partition (512 f32).
  }];
  let parameters = (ins
    "::mlir::ncore::MemSpace":$space,
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    DefaultValuedParameter<"int64_t", "0">:$startPartition
  );
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::ncore::MemSpace":$space,
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
        CArg<"int64_t", "0">:$startPartition), [{
      return $_get(elementType.getContext(), space, shape, elementType,
                   startPartition);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 0;
  let extraClassDeclaration = [{
    bool isOnChip() const { return getSpace() != ::mlir::ncore::MemSpace::Hbm; }
    int64_t getRank() const { return getShape().size(); }
    /// First dimension: partitions on chip, rows in HBM.
    int64_t getPartitions() const { return getShape().front(); }
    ::llvm::ArrayRef<int64_t> getFreeShape() const {
      return getShape().drop_front();
    }
    /// Elements per partition (product of the free dimensions).
    int64_t getFreeElements() const;
    int64_t getNumElements() const { return getPartitions() * getFreeElements(); }
    /// Bytes of one element (4 for f32, 2 for bf16).
    int64_t getElementBytes() const;
    /// Bytes per partition.
    int64_t getFreeBytes() const { return getFreeElements() * getElementBytes(); }
    /// Same tile in another space / with another shape or start.
    TileType withShape(::llvm::ArrayRef<int64_t> shape) const;
    TileType withStart(int64_t start) const;
  }];
}

//===----------------------------------------------------------------------===//
// Instruction interface
//===----------------------------------------------------------------------===//

def Ncore_InstructionOpInterface : OpInterface<"InstructionOpInterface"> {
  let cppNamespace = "::mlir::ncore";
  let description = [{
    An op that is one instruction of runtime/Isa.def. Its opcode, default
    engine and legal engines come from that table (by mnemonic); `translate`
    is the one translation to a runtime instruction, used by the emitter and
    by anything else that needs the instruction (NcoreTranslate.h). Tiles
    read and written are reported through MemoryEffectOpInterface
    (destination operands carry MemWrite, sources MemRead).
  }];
  let methods = [
    InterfaceMethod<"Isa.def opcode of this instruction.",
      "::mlir::ncore::Opcode", "getOpcode", (ins), "",
      [{ return *::mlir::ncore::opcodeForOpName(ConcreteOp::getOperationName()); }]>,
    InterfaceMethod<"Isa.def default engine of this instruction.",
      "::mlir::ncore::Engine", "getDefaultEngine", (ins), "",
      [{ return ::mlir::ncore::defaultEngine($_op.getOpcode()); }]>,
    InterfaceMethod<"True when the instruction may run on `engine` (Isa.def).",
      "bool", "isLegalEngine", (ins "::mlir::ncore::Engine":$engine), "",
      [{ return ::mlir::ncore::isLegalEngine($_op.getOpcode(), engine); }]>,
    InterfaceMethod<"The assigned engine (`engine` attribute) or the default.",
      "::mlir::ncore::Engine", "getExecutionEngine", (ins), "",
      [{
        if (auto e = $_op.getEngine())
          return *e;
        return $_op.getDefaultEngine();
      }]>,
    InterfaceMethod<"Assign the engine (the scheduler's choice).",
      "void", "setExecutionEngine", (ins "::mlir::ncore::Engine":$engine), "",
      [{ $_op.setEngine(engine); }]>,
    InterfaceMethod<[{
        Fills `t.inst` beyond its opcode and engine: the operand slots (tile
        operands in order: Dst, Src0, Src1, Aux) and the immediates. Generated
        from the op's `translation` (NcoreOps.td); call translateInstruction
        (NcoreTranslate.h) rather than this.
      }],
      "::mlir::LogicalResult", "translate",
      (ins "::mlir::ncore::InstructionTranslation &":$t)>
  ];
  /// Engine legality, GpSimd off PSUM, HBM only through DMA/collectives.
  let verify = [{ return ::mlir::ncore::verifyInstruction($_op); }];
}

#endif // NCORE_BASE_TD
