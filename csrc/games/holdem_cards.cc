#include "games/holdem_cards.h"

#include <cctype>
#include <stdexcept>

namespace rebel {
namespace holdem {

namespace {

int rank_of_char(char c) {
  const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int r = 0; r < kNumRanks; ++r) {
    if (kRankChars[r] == u) return r;
  }
  return -1;
}

int suit_of_char(char c) {
  const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int s = 0; s < kNumSuits; ++s) {
    if (kSuitChars[s] == l) return s;
  }
  return -1;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

std::string card_name(int card) {
  if (card < 0 || card >= kNumCards) {
    throw std::invalid_argument("card " + std::to_string(card) + " is out of range (0..51: rank * 4 + suit)");
  }
  return std::string{kRankChars[card_rank(card)], kSuitChars[card_suit(card)]};
}

std::string cards_name(const std::vector<int>& cards) {
  std::string out;
  for (int c : cards) out += card_name(c);
  return out;
}

int parse_card(std::string_view name) {
  if (name.size() != 2) {
    throw std::invalid_argument("card " + quoted(name) +
                                " is not a rank (23456789TJQKA) followed by a suit (cdhs), e.g. 'As' or 'Td'");
  }
  const int r = rank_of_char(name[0]);
  if (r < 0) {
    throw std::invalid_argument("card " + quoted(name) + ": '" + std::string(1, name[0]) +
                                "' is not a rank (23456789TJQKA; ten is T)");
  }
  const int s = suit_of_char(name[1]);
  if (s < 0) {
    throw std::invalid_argument("card " + quoted(name) + ": '" + std::string(1, name[1]) +
                                "' is not a suit (c, d, h, s)");
  }
  return make_card(r, s);
}

std::vector<int> parse_cards(std::string_view text) {
  std::vector<int> cards;
  uint64_t seen = 0;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == ',' || c == '\t') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != ',' && text[end] != '\t' && end - i < 2) ++end;
    if (end - i < 2) {
      throw std::invalid_argument("cards " + quoted(text) + ": " + quoted(text.substr(i, end - i)) +
                                  " is not a card (a rank 23456789TJQKA followed by a suit cdhs)");
    }
    const int card = parse_card(text.substr(i, 2));
    if (seen >> card & 1) throw std::invalid_argument("cards " + quoted(text) + ": " + card_name(card) + " appears twice");
    seen |= uint64_t{1} << card;
    cards.push_back(card);
    i += 2;
  }
  return cards;
}

void check_cards(const int* cards, int count) {
  uint64_t seen = 0;
  for (int i = 0; i < count; ++i) {
    const int c = cards[i];
    if (c < 0 || c >= kNumCards) {
      throw std::invalid_argument("card " + std::to_string(c) + " is out of range (0..51: rank * 4 + suit)");
    }
    if (seen >> c & 1) throw std::invalid_argument("card " + card_name(c) + " (" + std::to_string(c) + ") appears twice");
    seen |= uint64_t{1} << c;
  }
}

}  // namespace holdem
}  // namespace rebel
