//===- Reduce.cpp - seam-smith: shrink a failing graph --------------------===//
#include "tools/seam-smith/Reduce.h"
#include <algorithm>
#include <set>

using namespace smith;

namespace {

/// Readers of `from` read `to` instead (outputs too).
void replaceUses(Graph &g, int from, int to) {
  for (Node &n : g.nodes)
    for (int &o : n.in)
      if (o == from)
        o = to;
  for (int &o : g.outputs)
    if (o == from)
      o = to;
  std::vector<int> seen, outs;
  for (int o : g.outputs)
    if (std::find(outs.begin(), outs.end(), o) == outs.end())
      outs.push_back(o);
  g.outputs = outs;
}

/// `g` with op `i` deleted: its readers read an operand of its type, or a
/// new step input of its type.
Graph deleteOp(const Graph &g, int i) {
  Graph r = g;
  const Node &n = r.nodes[i];
  int to = -1;
  for (int o : n.in)
    if (r.nodes[o].shape == n.shape && r.nodes[o].dtype == n.dtype) {
      to = o;
      break;
    }
  if (to < 0) {
    Node in;
    in.op = Op::Input;
    in.shape = n.shape;
    in.dtype = n.dtype;
    r.nodes.push_back(in);
    to = int(r.nodes.size()) - 1;
  }
  replaceUses(r, i, to);
  r.nodes[i].dead = true;
  // An output that became a step input is dropped.
  std::vector<int> outs;
  for (int o : r.outputs)
    if (r.nodes[o].op != Op::Input)
      outs.push_back(o);
  r.outputs = outs;
  return r;
}

bool keep(Graph &g, std::vector<Graph> &out) {
  g.removeDeadNodes();
  if (!g.infer().empty())
    return false;
  out.push_back(g);
  return true;
}

} // namespace

std::vector<Graph> smith::reductions(const Graph &g) {
  std::vector<Graph> out;
  // Fewer outputs.
  if (g.outputs.size() > 1)
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      Graph r = g;
      r.outputs.erase(r.outputs.begin() + k);
      keep(r, out);
    }
  // Fewer ops, the last first.
  for (int i = int(g.nodes.size()) - 1; i >= 0; --i)
    if (!g.nodes[i].dead && g.nodes[i].op != Op::Input) {
      Graph r = deleteOp(g, i);
      keep(r, out);
    }
  // Plainer run options.
  auto variant = [&](auto change) {
    Graph r = g;
    change(r);
    keep(r, out);
  };
  if (!g.kernels.empty()) {
    variant([](Graph &r) { r.kernels.clear(); });
    if (g.kernels.size() > 1)
      for (size_t k = 0; k < g.kernels.size(); ++k)
        variant([&](Graph &r) {
          std::string first = r.kernels[k];
          r.kernels.erase(r.kernels.begin() + k);
          // auto:<a> lends its prefix to the next name.
          if (first.rfind("auto:", 0) == 0 && k == 0)
            r.kernels.front() = "auto:" + r.kernels.front();
        });
    if (g.kernels.front().rfind("auto", 0) == 0)
      variant([](Graph &r) {
        std::string &f = r.kernels.front();
        f = f == "auto" ? "" : f.substr(5);
        if (f.empty())
          r.kernels.erase(r.kernels.begin());
      });
  }
  if (g.boundary != "barrier")
    variant([](Graph &r) { r.boundary = "barrier"; });
  if (g.mode != "compile")
    variant([](Graph &r) { r.mode = "compile"; });
  if (g.target != "trn1")
    variant([](Graph &r) { r.target = "trn1"; });
  if (g.tp != 1)
    variant([](Graph &r) { r.tp = 1; });
  {
    std::set<int> blocks;
    for (const Node &n : g.nodes)
      if (!n.dead && n.op != Op::Input)
        blocks.insert(n.block);
    if (blocks.size() > 1 || (blocks.size() == 1 && *blocks.begin() != 0))
      variant([](Graph &r) {
        for (Node &n : r.nodes)
          n.block = 0;
      });
  }
  // bf16 -> f32 everywhere.
  bool bf16 = false;
  for (const Node &n : g.nodes)
    bf16 = bf16 || (!n.dead && n.op == Op::Input && n.dtype == DType::BF16);
  if (bf16)
    variant([](Graph &r) {
      for (Node &n : r.nodes)
        if (n.op == Op::Input && n.dtype == DType::BF16)
          n.dtype = DType::F32;
    });
  // Plainer ops: one flag or attribute at a time.
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &n = g.nodes[i];
    if (n.dead || n.op == Op::Input)
      continue;
    auto flag = [&](bool Node::*field) {
      if (n.*field)
        variant([&](Graph &r) { r.nodes[i].*field = false; });
    };
    flag(&Node::bias);
    flag(&Node::scale);
    flag(&Node::causal);
    flag(&Node::rope);
    flag(&Node::pad);
    flag(&Node::mask);
    flag(&Node::gelu);
    flag(&Node::geluInp);
    flag(&Node::geluQ);
    if (n.act)
      variant([&](Graph &r) { r.nodes[i].act = 0; });
    if (n.scaleOffset != 0)
      variant([&](Graph &r) { r.nodes[i].scaleOffset = 0; });
    if (n.scaleFactor != 1.0)
      variant([&](Graph &r) { r.nodes[i].scaleFactor = 1.0; });
    if (n.fftMult != 1)
      variant([&](Graph &r) { r.nodes[i].fftMult = 1; });
    if (n.lkPermille != 1000)
      variant([&](Graph &r) { r.nodes[i].lkPermille = 1000; });
    if (n.op == Op::FftConv && (n.hasV || n.hasQ)) {
      if (n.hasV)
        variant([&](Graph &r) {
          r.nodes[i].hasV = false;
          r.nodes[i].in.erase(r.nodes[i].in.begin() + 1);
        });
      if (n.hasQ)
        variant([&](Graph &r) {
          r.nodes[i].hasQ = false;
          r.nodes[i].geluQ = false;
          r.nodes[i].in.pop_back();
        });
    }
    if (n.op == Op::Concat && n.in.size() > 2)
      variant([&](Graph &r) { r.nodes[i].in.pop_back(); });
    if (n.op == Op::FourierMix && n.perm.size() > 1)
      for (size_t d = 0; d < n.perm.size(); ++d)
        variant([&](Graph &r) {
          r.nodes[i].perm.erase(r.nodes[i].perm.begin() + d);
        });
  }
  // Smaller sizes: a step input's dim, a linear's N; then one size
  // everywhere (keeps inputs that must agree in agreement).
  auto smaller = [](int64_t v) {
    std::vector<int64_t> s;
    if (v > 1)
      s.push_back(1);
    if (v > 3)
      s.push_back(v / 2);
    if (v > 2 && v % 2)
      s.push_back(v - 1);
    return s;
  };
  std::set<int64_t> sizes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node &n = g.nodes[i];
    if (n.dead)
      continue;
    if (n.op == Op::Input)
      for (size_t d = 0; d < n.shape.size(); ++d) {
        sizes.insert(n.shape[d]);
        for (int64_t v : smaller(n.shape[d]))
          variant([&](Graph &r) { r.nodes[i].shape[d] = v; });
      }
    if (n.op == Op::Linear) {
      sizes.insert(n.size);
      for (int64_t v : smaller(n.size))
        variant([&](Graph &r) { r.nodes[i].size = v; });
    }
  }
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it)
    for (int64_t v : smaller(*it))
      variant([&](Graph &r) {
        for (Node &n : r.nodes) {
          if (n.op == Op::Input)
            for (int64_t &d : n.shape)
              d = d == *it ? v : d;
          if (n.op == Op::Linear && n.size == *it)
            n.size = v;
        }
      });
  return out;
}

Graph smith::reduce(const Graph &g,
                    const std::function<bool(const Graph &)> &stillFails,
                    int budget, int *tries) {
  Graph best = g;
  int spent = 0;
  bool progress = true;
  while (progress && spent < budget) {
    progress = false;
    for (const Graph &r : reductions(best)) {
      if (spent >= budget)
        break;
      ++spent;
      if (stillFails(r)) {
        best = r;
        progress = true;
        break;
      }
    }
  }
  if (tries)
    *tries = spent;
  return best;
}
