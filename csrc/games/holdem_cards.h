// The 52-card deck of hold'em: card numbers, names and parsing.
//
// A card is an int in 0..51: card = rank * 4 + suit, with rank 0..12 for 2, 3, ..., 9, T, J,
// Q, K, A and suit 0..3 for clubs, diamonds, hearts, spades (c, d, h, s). So 0 = 2c, 1 = 2d,
// 4 = 3c, 48 = Ac, 51 = As, and sorting card numbers sorts by rank. A card's name is its rank
// character then its suit character ("As", "Td", "2c"); parsing also takes lower-case ranks
// and upper-case suits ("as", "AS"), and cards may be run together or separated by spaces or
// commas ("AsKd", "Td9d6h Qc", "As, Kd"). Malformed names, numbers outside 0..51 and a card
// given twice are std::invalid_argument (ValueError in Python), naming the culprit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rebel {
namespace holdem {

constexpr int kNumRanks = 13;
constexpr int kNumSuits = 4;
constexpr int kNumCards = 52;
constexpr char kRankChars[] = "23456789TJQKA";
constexpr char kSuitChars[] = "cdhs";

constexpr int card_rank(int card) { return card >> 2; }
constexpr int card_suit(int card) { return card & 3; }
constexpr int make_card(int rank, int suit) { return rank * 4 + suit; }

// "As" for 51; std::invalid_argument outside 0..51.
std::string card_name(int card);
// Names run together: "AsKd" for {51, 44}.
std::string cards_name(const std::vector<int>& cards);
// One card's name (exactly two characters) to its number.
int parse_card(std::string_view name);
// Several cards, run together or separated by spaces or commas; a card given twice is an error.
// The empty string gives no cards.
std::vector<int> parse_cards(std::string_view text);
// std::invalid_argument unless every card is in 0..51 and none repeats.
void check_cards(const int* cards, int count);

}  // namespace holdem
}  // namespace rebel
