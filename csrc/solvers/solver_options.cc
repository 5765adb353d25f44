// Names of the solver kinds and off-path modes (SolverKind, OffPath).
#include <stdexcept>
#include <string>

#include "solvers/subgame_solver.h"

namespace rebel {

SolverKind parse_solver_kind(const std::string& name) {
  if (name == "cfr") return SolverKind::kCfr;
  if (name == "lcfr" || name == "linear_cfr") return SolverKind::kLinearCfr;
  if (name == "cfr+" || name == "cfrplus" || name == "cfr_plus") return SolverKind::kCfrPlus;
  if (name == "dcfr") return SolverKind::kDcfr;
  if (name == "fp") return SolverKind::kFp;
  if (name == "lfp" || name == "linear_fp") return SolverKind::kLinearFp;
  throw std::invalid_argument("unknown solver '" + name + "'; choose one of cfr, lcfr, cfr+, dcfr, fp, lfp");
}

std::string solver_kind_name(SolverKind kind) {
  switch (kind) {
    case SolverKind::kCfr: return "cfr";
    case SolverKind::kLinearCfr: return "lcfr";
    case SolverKind::kCfrPlus: return "cfr+";
    case SolverKind::kDcfr: return "dcfr";
    case SolverKind::kFp: return "fp";
    case SolverKind::kLinearFp: return "lfp";
  }
  return "?";
}

SolverParams parse_solver(const std::string& name) {
  SolverParams p;
  if (name == "cfr-avg-play-avg" || name == "cfr-avg-modified-play-avg") {
    p = parse_solver(name.substr(0, name.size() - std::string("-play-avg").size()));
    p.play_average = true;
  } else if (name == "flop") {
    p.kind = SolverKind::kLinearFp;
    p.optimistic = true;
  } else if (name == "cfr-avg") {
    p.leaf_beliefs = LeafBeliefs::kAverage;
  } else if (name == "cfr-avg-modified") {
    p.leaf_beliefs = LeafBeliefs::kAverageDirect;
  } else {
    try {
      p.kind = parse_solver_kind(name);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("unknown solver '" + name +
                                  "'; choose one of cfr, lcfr, cfr+, dcfr, fp, lfp, flop, cfr-avg, cfr-avg-modified, cfr-avg-play-avg, "
                                  "cfr-avg-modified-play-avg");
    }
  }
  return p;
}

std::string solver_name(const SolverParams& params) {
  if (params.play_average) {
    SolverParams base = params;
    base.play_average = false;
    return solver_name(base) + "-play-avg";
  }
  if (params.kind == SolverKind::kLinearFp && params.optimistic) return "flop";
  if (params.kind == SolverKind::kLinearCfr && params.leaf_beliefs == LeafBeliefs::kAverage) return "cfr-avg";
  if (params.kind == SolverKind::kLinearCfr && params.leaf_beliefs == LeafBeliefs::kAverageDirect)
    return "cfr-avg-modified";
  return solver_kind_name(params.kind);
}

OffPath parse_off_path(const std::string& name) {
  if (name == "skip") return OffPath::kSkip;
  if (name == "floor") return OffPath::kFloor;
  if (name == "conditional") return OffPath::kConditional;
  throw std::invalid_argument("unknown off-path mode '" + name + "'; choose one of skip, floor, conditional");
}

std::string off_path_name(OffPath mode) {
  switch (mode) {
    case OffPath::kSkip: return "skip";
    case OffPath::kFloor: return "floor";
    case OffPath::kConditional: return "conditional";
  }
  return "?";
}
}  // namespace rebel
