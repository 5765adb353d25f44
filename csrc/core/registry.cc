#include "core/registry.h"

#include <stdexcept>

namespace rebel {

GameRegistry& GameRegistry::instance() {
  static GameRegistry registry;
  return registry;
}

bool GameRegistry::add(GameSpec spec) {
  const std::string name = spec.name;
  specs_.emplace(name, std::move(spec));
  return true;
}

std::vector<std::string> GameRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, spec] : specs_) out.push_back(name);
  return out;
}

const GameSpec& GameRegistry::spec(const std::string& name) const {
  auto it = specs_.find(name);
  if (it == specs_.end()) {
    std::string known;
    for (const auto& [n, s] : specs_) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown game '" + name + "'; known games: " + known);
  }
  return it->second;
}

GamePtr make_game(const std::string& name, const GameParams& params) {
  const GameSpec& spec = GameRegistry::instance().spec(name);
  GameParams full = spec.defaults;
  for (const auto& [key, value] : params) {
    bool found = false;
    for (auto& [dkey, dvalue] : full) {
      if (dkey == key) {
        dvalue = value;
        found = true;
      }
    }
    if (!found) {
      std::string accepted;
      for (const auto& [k, v] : spec.defaults) accepted += (accepted.empty() ? "" : ", ") + k;
      throw std::invalid_argument("game '" + name + "' has no parameter '" + key +
                                  "'; accepted: " + (accepted.empty() ? "(none)" : accepted));
    }
  }
  return spec.create(full);
}

}  // namespace rebel
