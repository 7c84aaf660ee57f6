//===- NcoreOps.td - ncore ISA ops -------------------------*- tablegen -*-===//
//
// The model
// ---------
// `ncore` is as close to the NeuronCore ISA as MLIR allows: each instruction
// op is exactly one opcode of runtime/Isa.def (op name = its mnemonic; the
// region op `ncore.loop` is the LoopBegin/LoopEnd pair), so the emitter is a
// walk and the runtime's decoder reads the same table.
//
// * Memory. Values of type `!ncore.tile<space, PxF...xdtype>` name buffers in
//   HBM, SBUF or PSUM. On chip the first dimension is the partition dimension
//   (<= 128 lanes) and the rest are free dimensions. `ncore.alloc` creates an
//   SBUF/PSUM tile (or an HBM scratch binding); `ncore-allocate` fills its
//   `offset`. `ncore.program` arguments are the HBM tensors bound at launch.
// * Access patterns. `ncore.view` selects a strided window of a tile; its
//   offsets are an affine map of enclosing `ncore.loop` induction variables,
//   which is exactly what the runtime's access patterns can step per loop
//   iteration. `ncore.reshape` regroups free dims. The emitter folds
//   view/reshape chains into one access pattern per operand.
// * Instructions use destination-passing style: they take the tile they
//   write as their first operand (`dst`) and have no results; operands carry
//   MemRead/MemWrite effects so the scheduler can compute dependencies.
// * Engines. Each instruction has the default engine of Isa.def and may carry
//   an `on <engine>` assignment (the scheduler's choice), checked for
//   legality: matmul/transpose run on the Tensor engine and write PSUM;
//   GpSimd cannot access PSUM; only DMA (and the collectives) touch HBM.
// * Synchronisation between engines is explicit (`sem_signal`/`sem_wait`);
//   `ncore.call_kernel` of a separately compiled program is opaque (no
//   memory-effect interface), so nothing is reordered across it.
//
//===----------------------------------------------------------------------===//

#ifndef NCORE_OPS_TD
#define NCORE_OPS_TD

include "dialect/ncore/NcoreBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

/// Every tile operand/result satisfies the TileType rules (re-checked for IR
/// built in C++, where TileType::get does not verify).
def Ncore_ValidTiles : NativeOpTrait<"ncore::ValidTiles">;

class Ncore_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ncore_Dialect, mnemonic, !listconcat([Ncore_ValidTiles], traits)>;

/// An instruction: one Isa.def opcode (the op's mnemonic names its row, which
/// also gives its legal engines and operand slots), optional engine
/// assignment.
class Ncore_InstOp<string mnemonic, list<Trait> traits = []>
    : Ncore_Op<mnemonic, !listconcat(
          [DeclareOpInterfaceMethods<Ncore_InstructionOpInterface>],
          traits)> {
  /// C++ body of InstructionOpInterface::translate: fills `t.inst` (an
  /// InstructionTranslation, NcoreTranslate.h) beyond opcode and engine. The
  /// default maps the tile operands in order onto the slots Dst, Src0, ...;
  /// ops with immediates add them (`t.inst.alu = t.convert(getAlu());`).
  code translation = [{ t.operands(getOperation()->getOperands()); }];
  /// C++ body of verify() for the op's own rules (beyond the tile rules and
  /// the shared instruction rules); empty: verify() is in NcoreOps.cpp.
  code verification = "";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::LogicalResult
    $cppClass::translate(::mlir::ncore::InstructionTranslation &t) {
  }] # translation # [{
      return t.status();
    }
  }] # !if(!empty(verification), "", [{
    ::mlir::LogicalResult $cppClass::verify() {
  }] # verification # [{
    }
  }]);
}

defvar Dst = Arg<Ncore_TileType, "destination tile", [MemWrite]>;
defvar Src = Arg<Ncore_TileType, "source tile", [MemRead]>;
defvar OptSrc = Arg<Optional<Ncore_TileType>, "source tile", [MemRead]>;

//===----------------------------------------------------------------------===//
// Structure: programs, kernel calls, loops
//===----------------------------------------------------------------------===//

def Ncore_ProgramOp : Ncore_Op<"program", [
    FunctionOpInterface, IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "a program: the unit the runtime loads and launches";
  let description = [{
    A symbol whose arguments are the HBM tensors bound at launch; it returns
    nothing (outputs are arguments written by DMA). Each argument may carry
    `ncore.role` = "input" | "output" | "param" | "constant" | "scratch"
    (runtime BindingRole; default "input"). A program without a body is a
    declaration of a separately compiled program (a kernel) that
    `ncore.call_kernel` may call.

    ```mlir
    ncore.program @mlp(%x: !ncore.tile<hbm, 128x768xbf16> {ncore.role = "input"},
                       %y: !ncore.tile<hbm, 128x768xbf16> {ncore.role = "output"}) {
      %t = ncore.alloc : !ncore.tile<sbuf, 128x768xbf16>
      ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
      ncore.dma_copy %y, %t : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<sbuf, 128x768xbf16>
    }
    ncore.program private @rmsnorm_kernel(!ncore.tile<hbm, 128x768xbf16>,
                                          !ncore.tile<hbm, 128x768xbf16>)
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    /// A program with an entry block whose arguments are `argTypes`.
    OpBuilder<(ins "::llvm::StringRef":$name,
                   "::llvm::ArrayRef<::mlir::Type>":$argTypes)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() {
      return isExternal() ? nullptr : &getBody();
    }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    bool isDeclaration() { return isExternal(); }
    /// The `ncore.role` of argument `i` ("input" when absent).
    ::llvm::StringRef getArgRole(unsigned i);
    void setArgRole(unsigned i, ::llvm::StringRef role);
    static constexpr ::llvm::StringLiteral kRoleAttrName = "ncore.role";
  }];
}

def Ncore_CallKernelOp : Ncore_Op<"call_kernel",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "launch a separately compiled kernel program (opaque)";
  let description = [{
    Calls the `ncore.program` named `callee` on HBM tensors. The callee is
    compiled on its own; to the caller it is a full barrier: the op has no
    memory-effect interface, so every engine drains before it and nothing is
    moved across it. Operand types must equal the callee's argument types.

    ```mlir
    ncore.call_kernel @rmsnorm_kernel(%x, %y)
        : !ncore.tile<hbm, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<Ncore_TileType>:$operands);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` type($operands)
  }];
  let hasVerifier = 1;
}

def Ncore_InlinedCallOp : Ncore_Op<"inlined_call",
    [IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "the body of a kernel call, inlined (ncore-inline-calls)";
  let description = [{
    What `ncore-inline-calls` leaves of an `ncore.call_kernel`: a copy of the
    callee's body whose block arguments stand for the callee's arguments and
    are bound to `operands` (contiguous HBM windows of the caller). Like the
    call it is a full barrier: every engine drains before the body and after
    it (the emitter makes the barriers). The body's on-chip offsets are
    already in the caller's SBUF / PSUM and its HBM scratch allocs are named
    `<callee>.<name>`.

    Semaphore ids inside the body (outside nested `ncore.inlined_call`s) are
    local to `callee`: ids 0, 1, ... shared by every inlined call of the same
    callee in a program, numbered in the order the emitter meets them (engine
    by engine, each engine's ops in program order), and a `sem_wait` value
    counts from the semaphore's value when the body starts. The emitter gives
    them machine semaphores of their own.

    ```mlir
    ncore.inlined_call @scale(%s, %y1) : !ncore.tile<hbm, 128x64xf32>, !ncore.tile<hbm, 128x64xf32> {
    ^bb0(%i: !ncore.tile<hbm, 128x64xf32>, %o: !ncore.tile<hbm, 128x64xf32>):
      %t = ncore.alloc offset 32768 : !ncore.tile<sbuf, 128x64xf32>
      ncore.dma_copy %t, %i : !ncore.tile<sbuf, 128x64xf32>, !ncore.tile<hbm, 128x64xf32>
      ncore.sem_signal 0 on dma
      ...
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<Ncore_TileType>:$operands);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $callee `(` $operands `)` `:` type($operands) attr-dict-with-keyword
    $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

def Ncore_KernelWaitOp : Ncore_Op<"kernel_wait"> {
  let summary = "wait, on one engine, for a kernel call's body to finish";
  let description = [{
    ncore-schedule puts it before the first instruction of `engine` after an
    `ncore.call_kernel` with the dependency boundary (`ncore.boundary =
    "dependency"`) that conflicts with the call: reads what the call writes,
    writes what it reads, or touches its on-chip bytes. `call` is the call's
    `ncore.call_id`; `bodyEngines` the engines of the body whose
    instructions it conflicts with. The emitter makes it a wait for the
    body's last instruction on each of them.

    ```mlir
    ncore.kernel_wait 0 for [0, 4] on vector
    ```
  }];
  let arguments = (ins I64Attr:$call, DenseI64ArrayAttr:$bodyEngines,
                       Ncore_Engine:$engine);
  let assemblyFormat = "$call `for` $bodyEngines `on` $engine attr-dict";
}

def Ncore_YieldOp : Ncore_Op<"yield", [Pure, Terminator,
                                       HasParent<"LoopOp">]> {
  let summary = "end of an ncore.loop body";
  let description = [{
    Implicit terminator of `ncore.loop` (not printed).

    ```mlir
    ncore.yield
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Ncore_LoopOp : Ncore_Op<"loop", [
    RecursiveMemoryEffects, SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a counted loop that stays a loop in the program";
  let description = [{
    Runs its body `trips` times with induction variable %i = 0, 1, ...,
    trips - 1 (an `index`). The emitter turns it into LoopBegin/LoopEnd of
    Isa.def in every stream that has instructions in the body; views whose
    offsets use %i become access patterns stepped per iteration. At most 4
    loops nest (the program format's limit).

    ```mlir
    ncore.loop %k trips 6 {
      %w = ncore.view %W[%k] offsets affine_map<(d0) -> (d0 * 128, 0)>
           : !ncore.tile<hbm, 768x512xbf16> to !ncore.tile<hbm, 128x512xbf16>
      ncore.dma_copy %t, %w : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<hbm, 128x512xbf16>
    }
    ```
  }];
  let arguments = (ins I64Attr:$trips);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    /// Creates the body block (with its induction variable) and terminator.
    OpBuilder<(ins "int64_t":$trips)>
  ];
  let extraClassDeclaration = [{
    ::mlir::BlockArgument getInductionVar() { return getBody().getArgument(0); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
    /// Number of ncore.loop ops enclosing this one, plus one.
    unsigned getDepth();
  }];
}

//===----------------------------------------------------------------------===//
// Memory: allocation and access patterns
//===----------------------------------------------------------------------===//

def Ncore_AllocOp : Ncore_Op<"alloc"> {
  let summary = "allocate a tile in SBUF or PSUM, or an HBM scratch binding";
  let description = [{
    `offset`, when present, is the allocation's placement, filled by
    `ncore-allocate`: bytes from the start of each partition (SBUF/PSUM) or
    from the start of the program's HBM region (HBM). A placed PSUM tile may
    not cross a 2 KiB bank boundary and must end within the 16 KiB of a
    partition. `name` labels an HBM scratch binding (spills), for statistics
    and dumps.

    ```mlir
    %a = ncore.alloc : !ncore.tile<sbuf, 128x512xbf16>
    %p = ncore.alloc offset 2048 : !ncore.tile<psum, 128x512xf32>
    %s = ncore.alloc {name = "spill0"} : !ncore.tile<hbm, 1024x768xbf16>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<StrAttr>:$name);
  let results = (outs Res<Ncore_TileType, "", [MemAlloc]>:$result);
  let assemblyFormat = "(`offset` $offset^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::ncore::TileType":$type), [{
      build($_builder, $_state, type, ::mlir::IntegerAttr(), ::mlir::StringAttr());
    }]>
  ];
}

def Ncore_ViewOp : Ncore_Op<"view", [Pure]> {
  let summary = "a strided window of a tile (an access pattern)";
  let description = [{
    Selects, in every dimension d of `source`, the elements
    `offset_d + j * stride_d` for j in [0, size_d), where sizes are the result
    shape, `strides` default to 1 (0 broadcasts a free dimension) and
    `offset_d` is result d of the affine map `offsets` applied to the listed
    induction variables of enclosing `ncore.loop`s (linear: no mod/div). The
    window must stay inside the source for every loop iteration. On chip the
    partition offset is a constant with stride 1, and the result type carries
    the new start partition.

    ```mlir
    %r = ncore.view %x[%i] offsets affine_map<(d0) -> (d0 * 128, 0)>
         : !ncore.tile<hbm, 512x768xbf16> to !ncore.tile<hbm, 128x768xbf16>
    %q = ncore.view %t offsets affine_map<() -> (64, 0)>
         : !ncore.tile<sbuf, 128x512xbf16> to !ncore.tile<sbuf, 32x256xbf16, start = 64>
    %b = ncore.view %c offsets affine_map<() -> (0, 0)> strides [1, 0]
         : !ncore.tile<sbuf, 128x1xf32> to !ncore.tile<sbuf, 128x512xf32>
    ```
  }];
  let arguments = (ins Ncore_TileType:$source, Variadic<Index>:$ivs,
                       AffineMapAttr:$offsets,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Ncore_TileType:$result);
  let assemblyFormat = [{
    $source (`[` $ivs^ `]`)? `offsets` $offsets (`strides` $strides^)?
    attr-dict `:` type($source) `to` type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    /// A loop-invariant view at constant `offsets` (unit strides).
    OpBuilder<(ins "::mlir::ncore::TileType":$resultType, "::mlir::Value":$source,
                   "::llvm::ArrayRef<int64_t>":$offsets)>,
    /// The window `shape` of `source` at `offsets` (a map over `ivs`) with
    /// `strides` (empty: unit); the result type follows from them (on chip,
    /// the start partition moves by the constant partition offset).
    OpBuilder<(ins "::mlir::Value":$source, "::llvm::ArrayRef<int64_t>":$shape,
                   "::mlir::ValueRange":$ivs, "::mlir::AffineMap":$offsets,
                   CArg<"::llvm::ArrayRef<int64_t>", "{}">:$strides)>
  ];
  let extraClassDeclaration = [{
    /// Stride of dimension d (1 when `strides` is absent).
    int64_t getStride(unsigned d);
    /// Offset of dimension d as `constant + sum_k coeffs[k] * ivs[k]`;
    /// failure if the map's result is not linear (the verifier rejects that).
    ::mlir::LogicalResult getLinearOffset(unsigned d,
        ::llvm::SmallVectorImpl<int64_t> &coeffs, int64_t &constant);
  }];
}

def Ncore_ReshapeOp : Ncore_Op<"reshape", [Pure]> {
  let summary = "regroup the free dimensions (or the dims of an HBM tensor)";
  let description = [{
    Same space, dtype, element count and (on chip) partitions and start
    partition; only the grouping of dimensions changes. The source must be
    contiguous for the emitter to fold it (an alloc, a binding, or a view that
    keeps whole rows).

    ```mlir
    %f = ncore.reshape %x : !ncore.tile<hbm, 1x6x256x128xbf16> to !ncore.tile<hbm, 1536x128xbf16>
    ```
  }];
  let arguments = (ins Ncore_TileType:$source);
  let results = (outs Ncore_TileType:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Ncore_DmaCopyOp : Ncore_InstOp<"dma_copy"> {
  let summary = "copy between HBM and SBUF, or within HBM/SBUF, by DMA";
  let description = [{
    `dst <- src`, element for element in row-major order (same element count
    and dtype: DMA does no arithmetic). The only instruction that reads or
    writes HBM (with the collectives). PSUM is not a DMA endpoint.

    ```mlir
    ncore.dma_copy %t, %x : !ncore.tile<sbuf, 128x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $src (`on` $engine^)? attr-dict `:` type($dst) `,` type($src)
  }];
  let extraClassDeclaration = [{
    /// A store: an on-chip source written to HBM (its readers wait for it;
    /// ncore-schedule gives stores their own trigger queue, ncore-split-dma
    /// cuts them finer).
    bool isStore() {
      return !::llvm::cast<TileType>(getDst().getType()).isOnChip() &&
             ::llvm::cast<TileType>(getSrc().getType()).isOnChip();
    }
  }];
}

def Ncore_TensorCopyOp : Ncore_InstOp<"tensor_copy"> {
  let summary = "on-chip copy with dtype conversion";
  let description = [{
    `dst <- src` on chip (same partitions and free element count), converting
    f32 <-> bf16. Vector engine by default; Scalar or GpSimd also legal
    (GpSimd not on PSUM). Evacuates PSUM into SBUF.

    ```mlir
    ncore.tensor_copy %o, %acc : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<psum, 128x512xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $src (`on` $engine^)? attr-dict `:` type($dst) `,` type($src)
  }];
}

//===----------------------------------------------------------------------===//
// Tensor engine
//===----------------------------------------------------------------------===//

def Ncore_MatmulOp : Ncore_InstOp<"matmul"> {
  let summary = "PSUM += stationary^T x moving on the Tensor engine";
  let description = [{
    Contracts over the partition dimension, as in NKI: `stationary` is
    [K, M] and `moving` is [K, N] in SBUF (same dtype), `dst` is [M, N] f32
    in PSUM, with K <= 128, M <= 128 and N <= 512 (one PSUM bank).
    `accumulate` adds onto `dst` instead of overwriting it (K tiling).

    ```mlir
    ncore.matmul %acc, %w, %x accumulate
        : !ncore.tile<psum, 128x512xf32>, !ncore.tile<sbuf, 128x128xbf16>, !ncore.tile<sbuf, 128x512xbf16>
    ```
  }];
  let arguments = (ins Arg<Ncore_TileType, "PSUM accumulator",
                           [MemRead, MemWrite]>:$dst,
                       Src:$stationary, Src:$moving, UnitAttr:$accumulate,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $stationary `,` $moving (`accumulate` $accumulate^)?
    (`on` $engine^)? attr-dict `:` type($dst) `,` type($stationary) `,` type($moving)
  }];
  let translation = [{
    t.operands({getDst(), getStationary(), getMoving()});
    if (::mlir::failed(t.status()))
      return ::mlir::failure();
    t.inst.accumulate = getAccumulate();
    if (auto lvl = (*this)->getAttrOfType<::mlir::IntegerAttr>(
            ::mlir::ncore::kStartLevelAttrName)) {
      if (lvl.getInt() < 0 || lvl.getInt() >= int64_t(t.loopDepth))
        return emitOpError() << "start_level " << lvl.getInt()
                             << " is not an enclosing loop level";
      t.inst.startLevel = static_cast<int8_t>(lvl.getInt());
    }
  }];
}

def Ncore_TransposeOp : Ncore_InstOp<"transpose"> {
  let summary = "transpose an SBUF tile into PSUM on the Tensor engine";
  let description = [{
    `dst[f, p] = src[p, f]`: `src` is [P, F] in SBUF with P, F <= 128,
    `dst` is [F, P] f32 in PSUM (a matmul against the identity).

    ```mlir
    ncore.transpose %pt, %t : !ncore.tile<psum, 64x128xf32>, !ncore.tile<sbuf, 128x64xbf16>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $src (`on` $engine^)? attr-dict `:` type($dst) `,` type($src)
  }];
}

//===----------------------------------------------------------------------===//
// Scalar / Vector / GpSimd engines
//===----------------------------------------------------------------------===//

def Ncore_ActivationOp : Ncore_InstOp<"activation", [AttrSizedOperandSegments]> {
  let summary = "dst = func(src * scale + bias) on the Scalar engine";
  let description = [{
    `bias` is the immediate `bias` attribute (default 0) or a per-partition
    [P, 1] tile operand (then the immediate must stay 0). With `reduce`, the
    outputs of each partition are also summed into the [P, 1] tile `reduce`.
    Reads SBUF or PSUM, writes SBUF or PSUM; Scalar engine only (it holds the
    function tables).

    ```mlir
    ncore.activation exp %e, %s bias %negmax reduce %sum {scale = 0.125 : f32}
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<psum, 128x512xf32>,
          !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, OptSrc:$bias_tile,
                       Arg<Optional<Ncore_TileType>, "add-reduce output",
                           [MemWrite]>:$reduce,
                       Ncore_ActFunc:$func,
                       DefaultValuedAttr<F32Attr, "1.0f">:$scale,
                       DefaultValuedAttr<F32Attr, "0.0f">:$bias,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $func $dst `,` $src (`bias` $bias_tile^)? (`reduce` $reduce^)?
    (`on` $engine^)? attr-dict `:` type(operands)
  }];
  let translation = [{
    t.operands({getDst(), getSrc(), getBiasTile(), getReduce()});
    t.inst.act = t.convert(getFunc());
    t.inst.scale = getScale().convertToFloat();
    t.inst.bias = getBias().convertToFloat();
  }];
}

def Ncore_TensorTensorOp : Ncore_InstOp<"tensor_tensor"> {
  let summary = "dst = lhs <op> rhs, elementwise";
  let description = [{
    Same partitions and free element count everywhere; at most one input in
    PSUM. Vector engine by default, GpSimd legal (not on PSUM).

    ```mlir
    ncore.tensor_tensor multiply %o, %a, %b
        : !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<sbuf, 128x512xbf16>, !ncore.tile<psum, 128x512xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$lhs, Src:$rhs, Ncore_AluOp:$alu,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $alu $dst `,` $lhs `,` $rhs (`on` $engine^)? attr-dict `:` type(operands)
  }];
  let translation = [{
    t.operands({getDst(), getLhs(), getRhs()});
    t.inst.alu = t.convert(getAlu());
  }];
}

def Ncore_TensorScalarOp : Ncore_InstOp<"tensor_scalar", [AttrSizedOperandSegments]> {
  let summary = "dst = (src <op> scalar) [<op1> scalar1], in one pass";
  let description = [{
    The scalar is the `imm` immediate or a [P, 1] tile (one value per
    partition) — exactly one of them. `reverse` computes `scalar <op> src`.
    An optional second operation `then <op1>` applies to that result with
    its own scalar, the `imm1` immediate or a [P, 1] tile after `with`
    (NKI's op1 / operand1): (x - mean) * rstd, or x * gamma + beta per
    partition, in the pass one operation takes. Vector by default; Scalar
    and GpSimd (not on PSUM) are legal.

    ```mlir
    ncore.tensor_scalar multiply %o, %x imm 0.5 : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
    ncore.tensor_scalar subtract %o, %x, %max : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
    ncore.tensor_scalar subtract %o, %x, %mean then multiply with %rstd
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, OptSrc:$scalar_tile,
                       OptSrc:$scalar1_tile,
                       Ncore_AluOp:$alu, OptionalAttr<F32Attr>:$imm,
                       UnitAttr:$reverse, OptionalAttr<Ncore_AluOp>:$alu1,
                       OptionalAttr<F32Attr>:$imm1,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $alu $dst `,` $src (`,` $scalar_tile^)? (`imm` $imm^)? (`reverse` $reverse^)?
    (`then` $alu1^)? (`with` $scalar1_tile^)? (`imm1` $imm1^)?
    (`on` $engine^)? attr-dict `:` type(operands)
  }];
  let translation = [{
    t.operands({getDst(), getSrc(), getScalarTile(), getScalar1Tile()});
    t.inst.alu = t.convert(getAlu());
    t.inst.scalar = getImm() ? getImm()->convertToFloat() : 0.0f;
    t.inst.reverse = getReverse();
    if (auto op1 = getAlu1()) {
      t.inst.secondOp = true;
      t.inst.alu1 = t.convert(*op1);
      t.inst.scalar1 = getImm1() ? getImm1()->convertToFloat() : 0.0f;
    }
  }];
}

def Ncore_ScalarTensorTensorOp : Ncore_InstOp<"scalar_tensor_tensor"> {
  let summary = "dst = (data * scalar) <op> tensor, elementwise, in one pass";
  let description = [{
    NKI's `scalar_tensor_tensor` with `op0` = multiply: `data` scaled by a
    per-partition scalar (a [P, 1] tile, or the `imm` immediate: exactly one
    of them), then combined with `tensor` by `op`. One pass over the data
    where tensor_scalar + tensor_tensor take two (a normalisation's
    `x * rstd * gamma`). Same partitions and free element count for dst,
    data and tensor. Vector by default, GpSimd legal (not on PSUM).

    ```mlir
    ncore.scalar_tensor_tensor multiply %o, %x, %gamma, %rstd
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
    ncore.scalar_tensor_tensor add %o, %x, %y imm 2.0
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$data, Src:$tensor, OptSrc:$scalar_tile,
                       Ncore_AluOp:$alu, OptionalAttr<F32Attr>:$imm,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $alu $dst `,` $data `,` $tensor (`,` $scalar_tile^)? (`imm` $imm^)?
    (`on` $engine^)? attr-dict `:` type(operands)
  }];
  let translation = [{
    t.operands({getDst(), getData(), getTensor(), getScalarTile()});
    t.inst.alu = t.convert(getAlu());
    t.inst.scalar = getImm() ? getImm()->convertToFloat() : 0.0f;
  }];
  let verification = [{
    if (failed(verifySameLayout(*this, getDst(), "dst", getData(), "data")) ||
        failed(verifySameLayout(*this, getDst(), "dst", getTensor(),
                                "tensor")))
      return failure();
    if (tileOf(getData()).getSpace() == MemSpace::Psum &&
        tileOf(getTensor()).getSpace() == MemSpace::Psum)
      return emitOpError("reads at most one operand from PSUM (data and "
                         "tensor are both in psum)");
    if (bool(getScalarTile()) == bool(getImm()))
      return emitOpError("takes one scalar: an immediate (imm) or a [P, 1] "
                         "tile");
    if (getScalarTile())
      return verifyColumn(*this, getScalarTile(), "scalar", getDst());
    return success();
  }];
}

def Ncore_TensorTensorScanOp : Ncore_InstOp<"tensor_tensor_scan"> {
  let summary = "scan of two tiles along the free dimension";
  let description = [{
    NKI's `tensor_tensor_scan` (Vector engine only): per partition, along
    the free elements i, `acc = (data0[i] <op0> acc) <op1> data1[i]` and
    `dst[i] = acc`, starting from `initial`: a [P, 1] tile or the `imm`
    immediate (exactly one of them). Same partitions and free element count
    for dst, data0 and data1; at most one of data0 and data1 in PSUM. Mamba's
    recurrence `h[i] = dA[i] * h[i-1] + dBu[i]` is `multiply then add`.

    ```mlir
    ncore.tensor_tensor_scan multiply then add %h, %da, %dbu imm 0.0
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>
    ncore.tensor_tensor_scan multiply then add %h, %da, %dbu, %h0
        : !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x512xf32>, !ncore.tile<sbuf, 128x1xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$data0, Src:$data1, OptSrc:$initial_tile,
                       Ncore_AluOp:$op0, Ncore_AluOp:$op1,
                       OptionalAttr<F32Attr>:$imm,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $op0 `then` $op1 $dst `,` $data0 `,` $data1 (`,` $initial_tile^)?
    (`imm` $imm^)? (`on` $engine^)? attr-dict `:` type(operands)
  }];
  let translation = [{
    t.operands({getDst(), getData0(), getData1(), getInitialTile()});
    t.inst.alu = t.convert(getOp0());
    t.inst.secondOp = true;
    t.inst.alu1 = t.convert(getOp1());
    t.inst.scalar = getImm() ? getImm()->convertToFloat() : 0.0f;
  }];
  let verification = [{
    if (failed(verifySameLayout(*this, getDst(), "dst", getData0(), "data0")) ||
        failed(verifySameLayout(*this, getDst(), "dst", getData1(), "data1")))
      return failure();
    if (tileOf(getData0()).getSpace() == MemSpace::Psum &&
        tileOf(getData1()).getSpace() == MemSpace::Psum)
      return emitOpError("reads at most one operand from PSUM (data0 and "
                         "data1 are both in psum)");
    if (bool(getInitialTile()) == bool(getImm()))
      return emitOpError("takes one initial value: an immediate (imm) or a "
                         "[P, 1] tile");
    if (getInitialTile())
      return verifyColumn(*this, getInitialTile(), "initial", getDst());
    return success();
  }];
}

def Ncore_TensorReduceOp : Ncore_InstOp<"tensor_reduce"> {
  let summary = "reduce along the last free dimension";
  let description = [{
    `dst` has the partitions of `src` and its free dims without the last one
    ([P, 1] when `src` is [P, F]); `op` is add, max, min or multiply.
    Vector by default, GpSimd legal (not on PSUM).

    ```mlir
    ncore.tensor_reduce max %m, %s : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<psum, 128x512xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, Ncore_AluOp:$alu,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $alu $dst `,` $src (`on` $engine^)? attr-dict `:` type($dst) `,` type($src)
  }];
  let translation = [{
    t.operands({getDst(), getSrc()});
    t.inst.alu = t.convert(getAlu());
  }];
}

def Ncore_ReciprocalOp : Ncore_InstOp<"reciprocal"> {
  let summary = "dst = 1 / src, elementwise";
  let description = [{
    Same partitions and free element count. Vector by default, GpSimd legal
    (not on PSUM).

    ```mlir
    ncore.reciprocal %r, %sum : !ncore.tile<sbuf, 128x1xf32>, !ncore.tile<sbuf, 128x1xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $src (`on` $engine^)? attr-dict `:` type($dst) `,` type($src)
  }];
  let verification = [{
    return verifySameLayout(*this, getDst(), "dst", getSrc(), "src");
  }];
}

def Ncore_MemsetOp : Ncore_InstOp<"memset"> {
  let summary = "fill a tile with a constant";
  let description = [{
    Vector by default; Scalar and GpSimd (not on PSUM) are legal.

    ```mlir
    ncore.memset %t, 0.0 : !ncore.tile<sbuf, 128x512xbf16>
    ```
  }];
  let arguments = (ins Dst:$dst, F32Attr:$value,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $value (`on` $engine^)? attr-dict `:` type($dst)
  }];
  let translation = [{
    t.operands({getDst()});
    t.inst.scalar = getValue().convertToFloat();
  }];
}

def Ncore_IotaOp : Ncore_InstOp<"iota"> {
  let summary = "dst[p, i] = base + partition_step * p + free_step * i (GpSimd)";
  let description = [{
    `p` is the partition index within the tile, `i` the flat free index.
    GpSimd only, so `dst` is in SBUF.

    ```mlir
    ncore.iota %pos base 0.0 partition_step 1.0 free_step 0.0 : !ncore.tile<sbuf, 128x1xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, F32Attr:$base, F32Attr:$partition_step,
                       F32Attr:$free_step, OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `base` $base `partition_step` $partition_step `free_step` $free_step
    (`on` $engine^)? attr-dict `:` type($dst)
  }];
  let translation = [{
    t.operands({getDst()});
    t.inst.affineConst = getBase().convertToFloat();
    t.inst.partitionCoef = getPartitionStep().convertToFloat();
    t.inst.freeCoef = getFreeStep().convertToFloat();
  }];
}

def Ncore_AffineSelectOp : Ncore_InstOp<"affine_select"> {
  let summary = "dst = (affine(p, i) <cmp> 0) ? src : on_false (GpSimd)";
  let description = [{
    With affine(p, i) = base + partition_step * p + free_step * i and `cmp`
    one of is_ge / is_equal: masks (causal, padding). GpSimd only, so neither
    tile may be in PSUM.

    ```mlir
    ncore.affine_select is_ge %m, %s base 0.0 partition_step 1.0 free_step -1.0 else -3.0e+38
        : !ncore.tile<sbuf, 128x128xf32>, !ncore.tile<sbuf, 128x128xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, Ncore_AluOp:$cmp, F32Attr:$base,
                       F32Attr:$partition_step, F32Attr:$free_step,
                       F32Attr:$on_false, OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $cmp $dst `,` $src `base` $base `partition_step` $partition_step
    `free_step` $free_step `else` $on_false (`on` $engine^)? attr-dict
    `:` type($dst) `,` type($src)
  }];
  let translation = [{
    t.operands({getDst(), getSrc()});
    t.inst.alu = t.convert(getCmp());
    t.inst.affineConst = getBase().convertToFloat();
    t.inst.partitionCoef = getPartitionStep().convertToFloat();
    t.inst.freeCoef = getFreeStep().convertToFloat();
    t.inst.scalar = getOnFalse().convertToFloat();
  }];
}

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

def Ncore_SemSignalOp : Ncore_InstOp<"sem_signal"> {
  let summary = "increment a semaphore when the engine's prior work is done";
  let description = [{
    Issued in the stream of `engine` (any engine; default sync). Semaphore
    ids are < 256 (program format).

    ```mlir
    ncore.sem_signal 3 on tensor
    ncore.sem_signal 4 count 2 on dma
    ```
  }];
  let arguments = (ins I64Attr:$sem, DefaultValuedAttr<I64Attr, "1">:$count,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $sem (`count` $count^)? (`on` $engine^)? attr-dict
  }];
  let translation = [{
    t.inst.signalSem = static_cast<int32_t>(getSem());
    t.inst.signalCount = static_cast<uint32_t>(getCount());
  }];
}

def Ncore_SemWaitOp : Ncore_InstOp<"sem_wait"> {
  let summary = "block the engine until a semaphore reaches a value";
  let description = [{
    Waits until `sem >= value + sum_d steps[d] * iteration[d]` over the
    enclosing loops (outermost first), so a loop body can wait for "the
    producer's iteration i". `steps` has one entry per enclosing ncore.loop.
    `carried n`: the wait is for an instruction of an earlier iteration of
    the n outermost loops, and holds in their first iteration (all n indices
    0), which has none; without it, the affine value there would name the
    producer engine's work before the loops.

    ```mlir
    ncore.sem_wait 3 ge 1 on vector
    ncore.sem_wait 3 ge 1 steps [1] on vector
    ncore.sem_wait 3 ge 0 steps [1] carried 1 on vector
    ```
  }];
  let arguments = (ins I64Attr:$sem, I64Attr:$value,
                       OptionalAttr<DenseI64ArrayAttr>:$steps,
                       OptionalAttr<I64Attr>:$carried,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $sem `ge` $value (`steps` $steps^)? (`carried` $carried^)?
    (`on` $engine^)? attr-dict
  }];
  let translation = [{
    ::seam::rt::SemWaitSpec w;
    w.sem = static_cast<uint16_t>(getSem());
    w.value = static_cast<uint32_t>(getValue());
    if (auto s = getSteps())
      for (auto [d, v] : ::llvm::enumerate(*s))
        if (d < w.step.size())
          w.step[d] = static_cast<int32_t>(v);
    w.carried = static_cast<uint8_t>(getCarried().value_or(0));
    t.inst.waits.push_back(w);
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Ncore_AllReduceOp : Ncore_InstOp<"all_reduce"> {
  let summary = "reduce a tensor over the `ranks` cores of a replica group";
  let description = [{
    `dst = op over ranks of src` (same shape; add, max, min or multiply),
    on HBM or SBUF, run by the collective engine.

    ```mlir
    ncore.all_reduce add %y, %x ranks 4 : !ncore.tile<hbm, 128x768xf32>, !ncore.tile<hbm, 128x768xf32>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, Ncore_AluOp:$alu, I64Attr:$ranks,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $alu $dst `,` $src `ranks` $ranks (`on` $engine^)? attr-dict
    `:` type($dst) `,` type($src)
  }];
  let translation = [{
    t.operands({getDst(), getSrc()});
    t.inst.alu = t.convert(getAlu());
  }];
}

def Ncore_AllGatherOp : Ncore_InstOp<"all_gather"> {
  let summary = "concatenate a tensor over the `ranks` cores, rank-major";
  let description = [{
    `dst` holds `ranks` times the elements of `src` (same dtype): rank r's
    `src` lands at flat element r * |src|. HBM or SBUF, collective engine.

    ```mlir
    ncore.all_gather %y, %x ranks 4 : !ncore.tile<hbm, 512x768xbf16>, !ncore.tile<hbm, 128x768xbf16>
    ```
  }];
  let arguments = (ins Dst:$dst, Src:$src, I64Attr:$ranks,
                       OptionalAttr<Ncore_Engine>:$engine);
  let assemblyFormat = [{
    $dst `,` $src `ranks` $ranks (`on` $engine^)? attr-dict
    `:` type($dst) `,` type($src)
  }];
}

#endif // NCORE_OPS_TD
