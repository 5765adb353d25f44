// Python bindings: hold'em cards (names, parsing) and hand ranks (one hand, many hands as a
// numpy array, exhaustive counts). Long calls run without the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/typing.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings/common.h"
#include "games/hand_rank.h"
#include "games/holdem_cards.h"

namespace rebel_bindings {

using namespace rebel;

namespace {

// One item of a card sequence: an int (or anything with __index__ but bool) in 0..51, or a
// single card name.
int card_of(PyObject* item) {
  if (PyUnicode_Check(item)) return holdem::parse_card(py::reinterpret_borrow<py::str>(item).cast<std::string>());
  if (PyBool_Check(item) || !PyIndex_Check(item)) {
    throw py::type_error("a card is an int (rank * 4 + suit) or a name such as 'As', got " +
                         std::string(Py_TYPE(item)->tp_name));
  }
  py::object index = PyLong_CheckExact(item) ? py::reinterpret_borrow<py::object>(item)
                                             : py::reinterpret_steal<py::object>(PyNumber_Index(item));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long c = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (c == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0 || c < 0 || c >= holdem::kNumCards) {
    throw py::value_error("card " + std::string(py::str(index)) + " is out of range (0..51: rank * 4 + suit)");
  }
  return static_cast<int>(c);
}

// A str of card names ("AsKd", "Td 9d 6h") or a sequence whose items are card numbers
// (0..51) or single card names; checked for range and repeats. Lists and tuples are read
// without Python iteration, so one call per hand costs little more than pybind11's dispatch.
std::vector<int> cards_of(const py::handle& obj) {
  if (py::isinstance<py::str>(obj)) return holdem::parse_cards(obj.cast<std::string>());
  if (!PySequence_Check(obj.ptr()) || py::isinstance<py::bytes>(obj)) {
    throw py::type_error("cards must be a str such as 'AsKd' or a sequence of card numbers (0..51) or names, got " +
                         std::string(Py_TYPE(obj.ptr())->tp_name));
  }
  std::vector<int> cards;
  if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    const py::ssize_t n = PySequence_Fast_GET_SIZE(obj.ptr());
    PyObject** items = PySequence_Fast_ITEMS(obj.ptr());
    cards.reserve(static_cast<size_t>(n));
    for (py::ssize_t i = 0; i < n; ++i) cards.push_back(card_of(items[i]));
  } else {
    for (const py::handle item : py::reinterpret_borrow<py::sequence>(obj)) cards.push_back(card_of(item.ptr()));
  }
  holdem::check_cards(cards.data(), static_cast<int>(cards.size()));
  return cards;
}

template <class T>
py::array_t<int32_t> ranks_of_rows(const py::array& hands) {
  auto a = py::array_t<T, py::array::c_style>::ensure(hands);
  if (!a) throw py::type_error("hands could not be read as a contiguous integer array");
  const size_t rows = static_cast<size_t>(a.shape(0));
  const int k = static_cast<int>(a.shape(1));
  py::array_t<int32_t> out(static_cast<py::ssize_t>(rows));
  const T* in = a.data();
  int32_t* dst = out.mutable_data();
  const long chunk = 1 << 20;
  run_in_chunks(static_cast<long>(rows), chunk, [&, done = size_t{0}](long n) mutable {
    holdem::hand_ranks(in + done * static_cast<size_t>(k), static_cast<size_t>(n), k, dst + done);
    done += static_cast<size_t>(n);
  });
  return out;
}

py::array_t<int32_t> hand_ranks_array(const py::handle& obj) {
  py::array hands;
  if (py::isinstance<py::array>(obj)) {
    hands = py::reinterpret_borrow<py::array>(obj);
  } else {
    try {
      hands = py::array::ensure(obj);
    } catch (...) {
    }
    if (!hands) throw py::type_error("hands must be an integer numpy array of shape (n, k), k = 5, 6 or 7");
  }
  const char kind = hands.dtype().kind();
  if (kind != 'i' && kind != 'u') {
    throw py::type_error("hands must have an integer dtype (card numbers 0..51), got " + std::string(py::str(hands.dtype())));
  }
  if (hands.ndim() != 2 || hands.shape(1) < 5 || hands.shape(1) > 7) {
    throw py::value_error("hands has shape " + shape_string(hands) + ", expected (n, k) with k = 5, 6 or 7");
  }
  if (same_dtype(hands, py::dtype::of<uint8_t>())) return ranks_of_rows<uint8_t>(hands);
  if (same_dtype(hands, py::dtype::of<int32_t>())) return ranks_of_rows<int32_t>(hands);
  if (same_dtype(hands, py::dtype::of<int64_t>())) return ranks_of_rows<int64_t>(hands);
  // Any other integer type as int64: exact for every value but uint64's above 2^63, which
  // turn negative and are refused as out of range all the same.
  py::array wide = hands.attr("astype")(py::dtype::of<int64_t>(), py::arg("casting") = "unsafe");
  return ranks_of_rows<int64_t>(wide);
}

std::vector<uint64_t> counts_without_gil(int num_cards) {
  py::gil_scoped_release release;
  return holdem::hand_rank_counts(num_cards);
}

}  // namespace

void bind_holdem(py::module_& m) {
  m.def("card_name", &holdem::card_name, py::arg("card"),
        "The name of card number `card` (rank * 4 + suit; ranks 23456789TJQKA, suits cdhs): 51 -> 'As'.");
  m.def("parse_cards", [](const std::string& text) { return holdem::parse_cards(text); }, py::arg("text"),
        "Card numbers of names run together or separated by spaces or commas: 'AsKd' -> [51, 44]. "
        "ValueError for a malformed or repeated card.");
  m.def("hand_rank", [](const py::object& cards) { return holdem::hand_rank(cards_of(cards)); }, py::arg("cards"),
        "Strength of the best five of 5, 6 or 7 cards (a str such as 'AsKsQsJsTs' or a sequence of card "
        "numbers or names): 1 (7-5-4-3-2 offsuit) .. 7462 (royal flush); larger wins, equal splits.");
  m.def("hand_class", [](const py::object& cards) {
          return std::string(holdem::hand_class_name(holdem::hand_class_of(holdem::hand_rank(cards_of(cards)))));
        }, py::arg("cards"),
        "The class of the best five of 5, 6 or 7 cards: 'high card', 'one pair', ..., 'straight flush'.");
  m.def("hand_rank_class", [](int rank) { return std::string(holdem::hand_class_name(holdem::hand_class_of(rank))); },
        py::arg("rank"), "The class of a strength in 1..7462.");
  m.def("hand_classes", [] {
          std::vector<std::string> names;
          for (int c = 0; c < holdem::kNumHandClasses; ++c) names.push_back(holdem::hand_class_name(static_cast<holdem::HandClass>(c)));
          return names;
        },
        "The nine hand classes, weakest first.");
  m.def("hand_class_first_ranks", [] {
          return std::vector<int>(std::begin(holdem::kClassFirstRank), std::end(holdem::kClassFirstRank));
        },
        "The first strength of each class, weakest first, then 7463: class c holds strengths "
        "first[c] .. first[c + 1] - 1.");
  m.def("hand_ranks", &hand_ranks_array, py::arg("hands"),
        "Strengths (int32) of n hands given as an integer array of shape (n, k), k = 5, 6 or 7, of card numbers. "
        "One thread, without the GIL; ValueError names the first hand with a card outside 0..51 or a repeated card.");
  m.def("hand_rank_counts", [](int num_cards) {
          const std::vector<uint64_t> counts = counts_without_gil(num_cards);
          py::array_t<int64_t> out(static_cast<py::ssize_t>(counts.size()));
          std::copy(counts.begin(), counts.end(), out.mutable_data());
          return out;
        }, py::arg("num_cards"),
        "How many of all C(52, num_cards) hands (num_cards = 5, 6 or 7) have each strength: an int64 array of "
        "length 7463, index 0 unused. Enumerates every hand in C++ without the GIL.");
  m.def("hand_class_counts", [](int num_cards) {
          const std::vector<uint64_t> counts = counts_without_gil(num_cards);
          py::typing::Dict<py::str, py::int_> out;
          for (int c = 0; c < holdem::kNumHandClasses; ++c) {
            uint64_t total = 0;
            for (int r = holdem::kClassFirstRank[c]; r < holdem::kClassFirstRank[c + 1]; ++r) total += counts[static_cast<size_t>(r)];
            out[py::str(holdem::hand_class_name(static_cast<holdem::HandClass>(c)))] = total;
          }
          return out;
        }, py::arg("num_cards"),
        "How many of all C(52, num_cards) hands (num_cards = 5, 6 or 7) fall in each class, weakest class first.");
}

}  // namespace rebel_bindings
