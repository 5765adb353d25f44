// Poker hand ranks: the strength of the best five of 5, 6 or 7 cards (cards as in
// games/holdem_cards.h: rank * 4 + suit).
//
// The strength is the hand's place among the 7,462 distinct five-card hands, 1 (7-5-4-3-2
// of mixed suits) to 7,462 (a royal flush): larger is better and equal strengths split the
// pot, so comparing two strengths is comparing the hands. The class of a strength follows
// from the range it falls in (kClassFirstRank).
//
// How: every card adds a 64-bit key: three bits per rank count the cards of that rank (bits
// 0..38), four bits per suit count the cards of that suit, each starting at 3 so that bit 3 of
// the suit's nibble is set exactly when the suit holds five or more cards (bits 40..55); a
// second word collects the cards as one bit per card, 16 bits per suit. A hand with a five-card
// suit is a flush or a straight flush (with at most seven cards nothing else can beat it): the
// suit's 13-bit rank mask indexes an 8,192-entry table. Otherwise the rank counts alone decide
// the hand; they index a perfect-hash table over the 73,775 ways to hold 5, 6 or 7 cards in
// 13 ranks (at most four of each): a multiply, a 16,384-entry displacement table and a
// 131,072-entry table of strengths. The tables (about 350 KB) are built once, on first use,
// from a direct best-five-cards function of the rank counts, and only read afterwards (safe
// from any number of threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebel {
namespace holdem {

enum class HandClass : int {
  kHighCard = 0,
  kOnePair = 1,
  kTwoPair = 2,
  kThreeOfAKind = 3,
  kStraight = 4,
  kFlush = 5,
  kFullHouse = 6,
  kFourOfAKind = 7,
  kStraightFlush = 8,
};
constexpr int kNumHandClasses = 9;
constexpr int kNumHandRanks = 7462;
// Strengths of class c are kClassFirstRank[c] .. kClassFirstRank[c + 1] - 1.
constexpr int kClassFirstRank[kNumHandClasses + 1] = {1, 1278, 4138, 4996, 5854, 5864, 7141, 7297, 7453, 7463};

// "high card", "one pair", "two pair", "three of a kind", "straight", "flush", "full house",
// "four of a kind", "straight flush".
const char* hand_class_name(HandClass c);
// The class of a strength in 1..7462 (std::invalid_argument otherwise).
HandClass hand_class_of(int rank);

// The strength of 5, 6 or 7 cards; std::invalid_argument for another count, a card outside
// 0..51 or a repeated card.
int hand_rank(const int* cards, int count);
inline int hand_rank(const std::vector<int>& cards) { return hand_rank(cards.data(), static_cast<int>(cards.size())); }

// `rows` hands of `k` cards each (5, 6 or 7), row-major, into out[rows]. Every card is
// checked: std::invalid_argument names the first bad row. One thread.
void hand_ranks(const uint8_t* cards, size_t rows, int k, int32_t* out);
void hand_ranks(const int32_t* cards, size_t rows, int k, int32_t* out);
void hand_ranks(const int64_t* cards, size_t rows, int k, int32_t* out);

// How many of all C(52, num_cards) hands (num_cards 5, 6 or 7) have each strength: a vector
// of kNumHandRanks + 1 counts, index 0 unused. Enumerates every hand in one thread.
std::vector<uint64_t> hand_rank_counts(int num_cards);

}  // namespace holdem
}  // namespace rebel
