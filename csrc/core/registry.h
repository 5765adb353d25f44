// Games are created by name and integer parameters. Adding a game = one .cc file with a
// REBEL_REGISTER_GAME line; nothing else needs to change.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/game.h"

namespace rebel {

struct GameSpec {
  std::string name;
  std::string summary;
  GameParams defaults;  // every accepted parameter with its default value
  std::function<GamePtr(const GameParams&)> create;  // params complete and validated by name
};

class GameRegistry {
 public:
  static GameRegistry& instance();
  bool add(GameSpec spec);
  std::vector<std::string> names() const;
  const GameSpec& spec(const std::string& name) const;  // throws std::invalid_argument
 private:
  std::map<std::string, GameSpec> specs_;
};

// Creates a game; unknown names or parameters throw std::invalid_argument.
GamePtr make_game(const std::string& name, const GameParams& params);

}  // namespace rebel

#define REBEL_REGISTER_GAME_CONCAT2(a, b) a##b
#define REBEL_REGISTER_GAME_CONCAT(a, b) REBEL_REGISTER_GAME_CONCAT2(a, b)
#define REBEL_REGISTER_GAME(spec_expr)                                              \
  static const bool REBEL_REGISTER_GAME_CONCAT(rebel_game_registered_, __LINE__) = \
      ::rebel::GameRegistry::instance().add(spec_expr)
