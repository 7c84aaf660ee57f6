//===- Registry.h - NKI-style kernels: names, signatures, constraints -----===//
//
// The one table of custom kernels, shared by `seam-insert-kernels` (which
// replaces an op by a `seam.kernel_call` only where the kernel's published
// constraints hold), by the `seam.kernel_call` verifier (a call whose
// constraints do not hold is invalid IR) and by lowering (which asks the
// entry for the kernel's builder).
//
// Every kernel replaces exactly one root op: the call takes the op's operands,
// produces its results and carries its attributes as `config`. So a site is
// checked the same way before and after insertion: `check(call signature)`.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_KERNELS_REGISTRY_H
#define SEAM_KERNELS_REGISTRY_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Operation.h"
#include <optional>
#include <string>

namespace mlir::ncore {
class ProgramOp;
}

namespace mlir::seam {

/// The signature of one kernel call site: operand and result tensor types
/// and the configuration (the root op's attributes).
struct KernelSignature {
  SmallVector<RankedTensorType> args;
  SmallVector<RankedTensorType> results;
  DictionaryAttr config;
};

struct KernelInfo {
  /// Name used in `kernels=` options and in `seam.kernel_call`.
  llvm::StringRef name;
  /// The op kind the kernel replaces (e.g. "seam.rope").
  llvm::StringRef rootOp;
  /// One line: what the kernel computes and where its constraints come from.
  llvm::StringRef summary;
  /// Structural precondition on the root op beyond its kind (e.g. qkv needs
  /// a linear over a concatenation of weights, the output of seam-fuse-qkv).
  /// Returns a reason when the op is not a site (empty: silently not one).
  std::optional<std::string> (*isSite)(Operation *root);
  /// The published constraints: nullopt when they hold, else which one
  /// failed, with the numbers.
  std::optional<std::string> (*check)(const KernelSignature &sig);
  /// A short description of the accepted site, for the acceptance remark.
  std::string (*describe)(const KernelSignature &sig);
  /// Creates the kernel's `ncore.program @symbolName` at the end of `module`
  /// (HBM arguments: the call's operands in order, then its results, roles
  /// input/output, then the constants the kernel needs, role constant with a
  /// `seam.constant` description: see kernels/Constants.h). Emits an error
  /// and fails when the signature is one the kernel cannot build.
  FailureOr<ncore::ProgramOp> (*build)(OpBuilder &b, ModuleOp module,
                                       const KernelSignature &sig,
                                       llvm::StringRef symbolName);
};

/// All registered kernels, in a stable order.
llvm::ArrayRef<KernelInfo> allKernels();
/// The kernel named `name`, or null.
const KernelInfo *lookupKernel(llvm::StringRef name);
/// "qkv, rope, ..." for error messages.
std::string knownKernelNames();

/// The signature the call replacing `root` would have.
KernelSignature signatureOfRoot(Operation *root);
/// The signature of an existing call (seam.kernel_call).
KernelSignature signatureOfCall(Operation *call);

/// fftconv's optional operands in a kernel signature (after u, k and d):
/// their positions in `args`, -1 when absent. [B, H, L] ones are v then q; a
/// [B, H] one is the dropout mask. A lone [B, H, L] one is q when the config
/// has `with_q` (signatureOfRoot puts it there for an fftconv with q and no
/// v) or `gelu_q`, else v.
struct FftconvOperands {
  int v = -1, q = -1, mask = -1;
};
FftconvOperands fftconvOperands(const KernelSignature &sig);

/// What getOrBuildKernelProgram has built in this process: kernel bodies
/// and the wall time spent building them (compile drivers report the
/// difference over a compile: in compile mode the bodies of kernel calls
/// inside programs are built during lowering).
struct KernelBuildStats {
  uint64_t bodies = 0;
  double ns = 0;
};
KernelBuildStats kernelBuildStats();

/// The symbol of the `ncore.program` implementing kernel `kernel` for
/// `sig` in `module`, building it on first use: programs are shared by every
/// call with the same signature (kernel name, types and config). Fails with
/// a diagnostic on an unknown kernel, violated constraints or a build error.
FailureOr<StringAttr> getOrBuildKernelProgram(ModuleOp module,
                                              llvm::StringRef kernel,
                                              const KernelSignature &sig);
/// A printable key of a signature: "fft(tensor<..>)->(...){axis = 1}".
std::string signatureKey(llvm::StringRef kernel, const KernelSignature &sig);

/// Installs the kernel_call verifier hook on the seam dialect: unknown
/// kernels, wrong arity and violated constraints become verifier errors.
void registerKernelRegistry(DialectRegistry &registry);

} // namespace mlir::seam

#endif // SEAM_KERNELS_REGISTRY_H
