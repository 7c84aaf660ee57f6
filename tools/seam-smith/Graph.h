//===- Graph.h - seam-smith's random graphs ---------------------*- C++ -*-===//
//
// A graph seam-smith generates, runs and reduces: nodes in topological order
// (operands before users), each a seam op whose shape follows from its
// operands and a few relative attributes (a linear's N, a reshape's recipe,
// a slice's fractions), so that shrinking a step input or deleting an op
// keeps the rest of the graph well formed wherever it can be. Parameters are
// not nodes: each op prints its own (weights, norm scales, rope tables,
// filters), shaped from its operands. `infer()` derives every shape and says
// why a graph is not one seam-smith believes valid; `print()` writes it as
// the MLIR text seam-run reads.
//
//===----------------------------------------------------------------------===//
#ifndef SEAM_TOOLS_SEAM_SMITH_GRAPH_H
#define SEAM_TOOLS_SEAM_SMITH_GRAPH_H

#include <cstdint>
#include <string>
#include <vector>

namespace smith {

/// splitmix64: the same sequence for a seed on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + int64_t(next() % uint64_t(hi - lo + 1));
  }
  bool chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[size_t(range(0, int64_t(v.size()) - 1))];
  }

private:
  uint64_t state;
};

/// Mixes a run's seed and a graph's index into the graph's seed.
uint64_t graphSeed(uint64_t seed, uint64_t index);

enum class DType { F32, BF16, C64 };

enum class Op {
  Input,
  Linear,
  LayerNorm,
  RmsNorm,
  Gelu,
  GeluTanh,
  Silu,
  Add,
  Mul,
  Reshape,
  Transpose,
  Concat,
  Slice,
  Rope,
  Attention,
  FourierMix,
  Fft,
  Ifft,
  FftConv,
  AllReduce,
  AllGather,
};

const char *opName(Op op);

/// Reshape recipes, relative to the operand's shape.
enum class ReshapeKind {
  Merge,     ///< dims axis and axis + 1 into one
  Split,     ///< dim axis into (factor, size / factor)
  Unsqueeze, ///< a dim of 1 before axis
  Squeeze,   ///< drop dim axis (of size 1)
};

struct Node {
  Op op = Op::Input;
  std::vector<int> in; ///< operands (node ids)
  /// Input: given. Every other op: derived by Graph::infer().
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  int block = 0; ///< seam.block it sits in; -1: the function body
  bool dead = false;
  uint64_t seed = 1; ///< its parameters' seeds derive from it

  // Attributes; which ones an op reads is in Graph::infer and print.
  int64_t size = 0; ///< Linear: N
  int axis = 0;     ///< Concat/AllGather dim, Fft/Ifft axis, Reshape axis
  ReshapeKind reshape = ReshapeKind::Merge;
  int64_t factor = 1;        ///< Reshape Split factor
  std::vector<int64_t> perm; ///< Transpose perm, FourierMix dims
  /// Slice: per dim, the size and the offset (of what is left) in 1/1000.
  std::vector<int> frac;
  int act = 0;       ///< Linear activation: 0 none, 1 gelu, 2 gelu_tanh, 3 silu
  bool bias = false; ///< Linear, LayerNorm
  bool scale = false; ///< Linear (row scale), LayerNorm, RmsNorm
  double eps = 1e-5, scaleOffset = 0; ///< norms
  double scaleFactor = 1.0;           ///< Attention: scale = factor / sqrt(D)
  bool causal = false, rope = false;  ///< Attention (rope: fused tables)
  bool complexOut = false;            ///< Fft, Ifft
  bool pad = false; ///< Fft: pad_to the next power of two above N
  /// FftConv: in = u [, v] [, q]; gelu flags; mask; filter length in 1/1000
  /// of L; fft_size = the default (2L up to a power of two) times fftMult.
  bool hasV = false, hasQ = false, mask = false;
  bool gelu = false, geluInp = false, geluQ = false;
  int lkPermille = 1000;
  int fftMult = 1;
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<int> outputs;
  // How it runs (seam-run's flags).
  int tp = 1;
  std::string mode = "compile", target = "trn1", boundary = "barrier";
  std::vector<std::string> kernels; ///< as --kernels takes them

  /// Derives every shape and dtype; "" when the graph is one seam-smith
  /// believes valid, else why not. Without `outputs`, the outputs are not
  /// checked (a graph being built has none yet).
  std::string infer(bool outputs = true);
  /// The MLIR text (infer() must have succeeded).
  std::string print() const;
  /// seam-run's flags for this graph (after the file name).
  std::string flags() const;
  /// Live ops that are not step inputs.
  int opCount() const;
  /// Marks ops no output depends on dead.
  void removeDeadNodes();
  /// One line: ops, kernels, mode, tp, target.
  std::string summary() const;
};

/// The FFT size fftconv's reference picks for length l (SeamOps.td).
int64_t defaultFftSize(int64_t l);

/// Limits that keep one graph's run well under 100 ms.
constexpr int64_t kMaxElements = int64_t(1) << 16;

} // namespace smith

#endif
