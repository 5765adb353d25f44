#include "games/hand_rank.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "games/holdem_cards.h"

namespace rebel {
namespace holdem {

namespace {

// ------------------------------------------------------------------------- card keys

constexpr int kSuitShift = 40;                                       // suit counters: bits 40..55
constexpr uint64_t kSuitBias = uint64_t{0x3333} << kSuitShift;      // each counter starts at 3
constexpr uint64_t kFlushBits = uint64_t{0x8888} << kSuitShift;     // counter >= 8: five or more
constexpr uint64_t kCountMask = (uint64_t{1} << 39) - 1;             // 13 rank counters of 3 bits

constexpr int kCounterShift = 56;                                    // valid cards counted in bits 56..59

// Per card number, indexed by any byte (entries 52..255 zero: no such card): the key adds one
// to the card's rank counter, its suit counter and the card counter; the bit is suit * 16 + rank.
struct CardTables {
  uint64_t key[256];
  uint64_t bit[256];
};

constexpr CardTables make_card_tables() {
  CardTables t{};
  for (int c = 0; c < kNumCards; ++c) {
    const int r = card_rank(c), s = card_suit(c);
    t.key[c] = (uint64_t{1} << (3 * r)) + (uint64_t{1} << (kSuitShift + 4 * s)) + (uint64_t{1} << kCounterShift);
    t.bit[c] = uint64_t{1} << (16 * s + r);
  }
  return t;
}
constexpr CardTables kCards = make_card_tables();

// ------------------------------------------------------------------------- best five cards
//
// A raw value orders hands exactly: the class in bits 20..23, then five ranks of four bits,
// the most significant first. The ranks are the five cards' ranks listed by (count, rank)
// descending (KKK22: K K K 2 2; 99-A-7-4: 9 9 A 7 4), which compares hands of one class as
// poker does; a straight is its top card alone (the wheel's top card is the five).

constexpr int kFive = 3;  // rank index of the five

uint32_t raw_value(HandClass c, std::initializer_list<int> ranks) {
  uint32_t v = static_cast<uint32_t>(c);
  int n = 0;
  for (int r : ranks) {
    v = v << 4 | static_cast<uint32_t>(r);
    ++n;
  }
  for (; n < 5; ++n) v <<= 4;
  return v;
}

// Top card of the best straight in a 13-bit rank mask, or -1.
int straight_top(uint32_t mask) {
  for (int top = 12; top >= 4; --top) {
    if ((mask >> (top - 4) & 0x1f) == 0x1f) return top;
  }
  if ((mask & 0x100f) == 0x100f) return kFive;  // A-2-3-4-5
  return -1;
}

// The best five of one suit's cards (five to seven ranks set in `mask`).
uint32_t best_flush(uint32_t mask) {
  const int top = straight_top(mask);
  if (top >= 0) return raw_value(HandClass::kStraightFlush, {top});
  int r[5], n = 0;
  for (int rank = 12; rank >= 0 && n < 5; --rank) {
    if (mask >> rank & 1) r[n++] = rank;
  }
  return raw_value(HandClass::kFlush, {r[0], r[1], r[2], r[3], r[4]});
}

// The best five cards without a flush, from the count of cards of each rank (5 to 7 cards).
uint32_t best_of_counts(const std::array<int, kNumRanks>& count) {
  int quads = -1, trips[2] = {-1, -1}, pairs[3] = {-1, -1, -1}, singles[7];
  int nt = 0, np = 0, ns = 0;
  uint32_t present = 0;
  for (int r = 12; r >= 0; --r) {
    const int c = count[static_cast<size_t>(r)];
    if (c > 0) present |= 1u << r;
    if (c == 4) quads = r;
    else if (c == 3) trips[nt++] = r;
    else if (c == 2) pairs[np++] = r;
    else if (c == 1) singles[ns++] = r;
  }
  // The highest rank present other than the given ones.
  auto best_other = [&](int a, int b) {
    for (int r = 12; r >= 0; --r) {
      if ((present >> r & 1) && r != a && r != b) return r;
    }
    return -1;
  };
  if (quads >= 0) return raw_value(HandClass::kFourOfAKind, {quads, quads, quads, quads, best_other(quads, -1)});
  if (nt > 0 && (nt > 1 || np > 0)) {
    const int pair = std::max(trips[1], pairs[0]);
    return raw_value(HandClass::kFullHouse, {trips[0], trips[0], trips[0], pair, pair});
  }
  const int top = straight_top(present);
  if (top >= 0) return raw_value(HandClass::kStraight, {top});
  if (nt > 0) return raw_value(HandClass::kThreeOfAKind, {trips[0], trips[0], trips[0], singles[0], singles[1]});
  if (np >= 2) {
    const int a = pairs[0], b = pairs[1];
    return raw_value(HandClass::kTwoPair, {a, a, b, b, best_other(a, b)});
  }
  if (np == 1) return raw_value(HandClass::kOnePair, {pairs[0], pairs[0], singles[0], singles[1], singles[2]});
  return raw_value(HandClass::kHighCard, {singles[0], singles[1], singles[2], singles[3], singles[4]});
}

// ------------------------------------------------------------------------- tables

constexpr int kBucketBits = 14;
constexpr int kSlotBits = 17;
constexpr uint32_t kSlots = 1u << kSlotBits;

struct Tables {
  std::array<uint16_t, 8192> flush{};  // by one suit's rank mask (five or more ranks set)
  std::vector<uint32_t> displace;      // by bucket
  std::vector<uint16_t> slots;         // strength, 0 = no hand hashes here
  uint64_t multiplier = 0;

  uint32_t slot(uint64_t counts, uint32_t* bucket_out = nullptr) const {
    const uint64_t h = counts * multiplier;
    const uint32_t bucket = static_cast<uint32_t>(h >> (64 - kBucketBits));
    const uint32_t base = static_cast<uint32_t>(h >> (64 - kBucketBits - kSlotBits)) & (kSlots - 1);
    if (bucket_out) *bucket_out = bucket;
    return base ^ (displace.empty() ? 0u : displace[bucket]);
  }
};

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Every rank-count vector with `total` cards (at most four of a rank), as packed counters.
void count_vectors(int rank, int left, uint64_t packed, std::array<int, kNumRanks>* count,
                   std::vector<std::pair<uint64_t, std::array<int, kNumRanks>>>* out) {
  if (rank == kNumRanks) {
    if (left == 0) out->push_back({packed, *count});
    return;
  }
  for (int c = 0; c <= std::min(4, left); ++c) {
    (*count)[static_cast<size_t>(rank)] = c;
    count_vectors(rank + 1, left - c, packed + (static_cast<uint64_t>(c) << (3 * rank)), count, out);
  }
  (*count)[static_cast<size_t>(rank)] = 0;
}

Tables build_tables() {
  // The 7,462 distinct five-card values, in order: their positions are the strengths.
  std::vector<std::pair<uint64_t, std::array<int, kNumRanks>>> fives, hands;
  std::array<int, kNumRanks> scratch{};
  count_vectors(0, 5, 0, &scratch, &fives);
  std::vector<uint32_t> order;
  for (const auto& f : fives) order.push_back(best_of_counts(f.second));
  for (uint32_t mask = 0; mask < 8192; ++mask) {
    if (__builtin_popcount(mask) == 5) order.push_back(best_flush(mask));
  }
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  if (static_cast<int>(order.size()) != kNumHandRanks) throw std::logic_error("hand_rank: not 7462 five-card values");
  auto strength = [&](uint32_t raw) {
    const auto it = std::lower_bound(order.begin(), order.end(), raw);
    if (it == order.end() || *it != raw) throw std::logic_error("hand_rank: a best five missing from the five-card values");
    return static_cast<uint16_t>(it - order.begin() + 1);
  };
  for (int c = 0; c < kNumHandClasses; ++c) {  // the class ranges stated in the header
    const uint32_t first = order[static_cast<size_t>(kClassFirstRank[c] - 1)];
    const uint32_t last = order[static_cast<size_t>(kClassFirstRank[c + 1] - 2)];
    if (static_cast<int>(first >> 20) != c || static_cast<int>(last >> 20) != c) {
      throw std::logic_error("hand_rank: class ranges differ from kClassFirstRank");
    }
  }

  Tables t;
  for (uint32_t mask = 0; mask < 8192; ++mask) {
    if (__builtin_popcount(mask) >= 5) t.flush[mask] = strength(best_flush(mask));
  }

  for (int n = 5; n <= 7; ++n) count_vectors(0, n, 0, &scratch, &hands);
  std::vector<uint16_t> value(hands.size());
  for (size_t i = 0; i < hands.size(); ++i) value[i] = strength(best_of_counts(hands[i].second));

  // Perfect hash: bucket and base slot from one multiply; each bucket's keys are moved by one
  // XOR displacement, chosen greedily, the largest buckets first. A multiplier under which two
  // keys share bucket and base (about one chance in four) or a bucket finds no displacement is
  // replaced by the next one of a fixed sequence, so the tables are the same on every run.
  uint64_t seed = 0x726562656c2d6872ULL;
  for (int attempt = 0; attempt < 64; ++attempt) {
    t.multiplier = splitmix64(&seed) | 1;
    t.displace.clear();
    std::vector<std::vector<uint32_t>> members(size_t{1} << kBucketBits);
    std::vector<uint32_t> base(hands.size());
    for (size_t i = 0; i < hands.size(); ++i) {
      uint32_t bucket = 0;
      base[i] = t.slot(hands[i].first, &bucket);
      members[bucket].push_back(static_cast<uint32_t>(i));
    }
    std::vector<uint32_t> buckets(members.size());
    for (uint32_t b = 0; b < buckets.size(); ++b) buckets[b] = b;
    std::stable_sort(buckets.begin(), buckets.end(),
                     [&](uint32_t a, uint32_t b) { return members[a].size() > members[b].size(); });
    std::vector<uint16_t> slots(kSlots, 0);
    std::vector<uint32_t> displace(members.size(), 0);
    bool ok = true;
    for (uint32_t b : buckets) {
      const auto& keys = members[b];
      if (keys.empty()) break;
      std::vector<uint32_t> bases;
      for (uint32_t k : keys) bases.push_back(base[k]);
      std::sort(bases.begin(), bases.end());
      if (std::adjacent_find(bases.begin(), bases.end()) != bases.end()) {
        ok = false;  // two keys no displacement can separate
        break;
      }
      uint32_t d = 0;
      auto fits = [&](uint32_t disp) {
        for (uint32_t x : bases) {
          if (slots[x ^ disp] != 0) return false;
        }
        return true;
      };
      while (d < kSlots && !fits(d)) ++d;
      if (d == kSlots) {
        ok = false;
        break;
      }
      displace[b] = d;
      for (uint32_t k : keys) slots[base[k] ^ d] = value[k];
    }
    if (ok) {
      t.displace = std::move(displace);
      t.slots = std::move(slots);
      return t;
    }
  }
  throw std::logic_error("hand_rank: no perfect hash found");
}

const Tables& tables() {
  static const Tables t = build_tables();
  return t;
}

// The strength of a hand given its summed keys and card bits.
inline int strength_of(uint64_t key, uint64_t bits, const Tables& t) {
  const uint64_t flush = key & kFlushBits;
  if (__builtin_expect(flush != 0, 0)) {
    const int suit = (__builtin_ctzll(flush) - kSuitShift - 3) >> 2;
    return t.flush[(bits >> (16 * suit)) & 0x1fff];
  }
  const uint64_t h = (key & kCountMask) * t.multiplier;
  const uint32_t bucket = static_cast<uint32_t>(h >> (64 - kBucketBits));
  const uint32_t base = static_cast<uint32_t>(h >> (64 - kBucketBits - kSlotBits)) & (kSlots - 1);
  return t.slots[base ^ t.displace[bucket]];
}

[[noreturn]] void bad_row(size_t row, const int64_t* cards, int k) {
  try {
    std::vector<int> v;
    for (int j = 0; j < k; ++j) {
      if (cards[j] < 0 || cards[j] >= kNumCards) {
        throw std::invalid_argument("card " + std::to_string(cards[j]) + " is out of range (0..51: rank * 4 + suit)");
      }
      v.push_back(static_cast<int>(cards[j]));
    }
    check_cards(v.data(), k);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("hand " + std::to_string(row) + ": " + e.what());
  }
  throw std::logic_error("hand_ranks: a valid row was refused");
}

// Card numbers of any integer type as table indices: bytes as they are, wider values folded
// into 0..255 with their excess bits collected in `outside`.
template <class T>
inline size_t card_index(T c, uint64_t* outside) {
  if constexpr (sizeof(T) == 1) {
    return static_cast<uint8_t>(c);
  } else {
    *outside |= static_cast<uint64_t>(c) >> 8;
    return static_cast<size_t>(static_cast<uint64_t>(c) & 255);
  }
}

// Each row's keys and bits are summed, and the bits also OR-ed: a card outside 0..51 adds
// nothing to the card counter, and a repeated card makes the sum of the bits differ from their
// OR, so one comparison per row finds both.
template <int K, class T>
void rank_rows(const T* cards, size_t rows, int32_t* out, const Tables& t) {
  for (size_t i = 0; i < rows; ++i) {
    const T* row = cards + i * K;
    uint64_t key = kSuitBias, bits = 0, bit_sum = 0, outside = 0;
    for (int j = 0; j < K; ++j) {
      const size_t c = card_index(row[j], &outside);
      key += kCards.key[c];
      bits |= kCards.bit[c];
      bit_sum += kCards.bit[c];
    }
    if (__builtin_expect(((key >> kCounterShift) != K) | (bits != bit_sum) | (outside != 0), 0)) {
      int64_t copy[K];
      for (int j = 0; j < K; ++j) copy[j] = static_cast<int64_t>(row[j]);
      bad_row(i, copy, K);
    }
    out[i] = strength_of(key, bits, t);
  }
}

template <class T>
void rank_rows_any(const T* cards, size_t rows, int k, int32_t* out) {
  const Tables& t = tables();
  switch (k) {
    case 5: return rank_rows<5>(cards, rows, out, t);
    case 6: return rank_rows<6>(cards, rows, out, t);
    case 7: return rank_rows<7>(cards, rows, out, t);
    default:
      throw std::invalid_argument("a hand has 5, 6 or 7 cards, not " + std::to_string(k));
  }
}

template <int Left>
void count_hands(int first, uint64_t key, uint64_t bits, const Tables& t, uint64_t* counts) {
  for (int c = first; c <= kNumCards - Left; ++c) {
    const uint64_t k = key + kCards.key[c], b = bits | kCards.bit[c];
    if constexpr (Left == 1) {
      ++counts[strength_of(k, b, t)];
    } else {
      count_hands<Left - 1>(c + 1, k, b, t, counts);
    }
  }
}

}  // namespace

const char* hand_class_name(HandClass c) {
  switch (c) {
    case HandClass::kHighCard: return "high card";
    case HandClass::kOnePair: return "one pair";
    case HandClass::kTwoPair: return "two pair";
    case HandClass::kThreeOfAKind: return "three of a kind";
    case HandClass::kStraight: return "straight";
    case HandClass::kFlush: return "flush";
    case HandClass::kFullHouse: return "full house";
    case HandClass::kFourOfAKind: return "four of a kind";
    case HandClass::kStraightFlush: return "straight flush";
  }
  return "?";
}

HandClass hand_class_of(int rank) {
  if (rank < 1 || rank > kNumHandRanks) {
    throw std::invalid_argument("hand strength " + std::to_string(rank) + " is out of range (1..7462)");
  }
  int c = 0;
  while (rank >= kClassFirstRank[c + 1]) ++c;
  return static_cast<HandClass>(c);
}

int hand_rank(const int* cards, int count) {
  if (count < 5 || count > 7) {
    throw std::invalid_argument("a hand has 5, 6 or 7 cards, not " + std::to_string(count));
  }
  check_cards(cards, count);
  uint64_t key = kSuitBias, bits = 0;
  for (int j = 0; j < count; ++j) {
    key += kCards.key[cards[j]];
    bits |= kCards.bit[cards[j]];
  }
  return strength_of(key, bits, tables());
}

void hand_ranks(const uint8_t* cards, size_t rows, int k, int32_t* out) { rank_rows_any(cards, rows, k, out); }
void hand_ranks(const int32_t* cards, size_t rows, int k, int32_t* out) { rank_rows_any(cards, rows, k, out); }
void hand_ranks(const int64_t* cards, size_t rows, int k, int32_t* out) { rank_rows_any(cards, rows, k, out); }

std::vector<uint64_t> hand_rank_counts(int num_cards) {
  std::vector<uint64_t> counts(kNumHandRanks + 1, 0);
  const Tables& t = tables();
  switch (num_cards) {
    case 5: count_hands<5>(0, kSuitBias, 0, t, counts.data()); break;
    case 6: count_hands<6>(0, kSuitBias, 0, t, counts.data()); break;
    case 7: count_hands<7>(0, kSuitBias, 0, t, counts.data()); break;
    default:
      throw std::invalid_argument("a hand has 5, 6 or 7 cards, not " + std::to_string(num_cards));
  }
  return counts;
}

}  // namespace holdem
}  // namespace rebel
