// Helpers shared by the binding files: strict numpy conversion (wrong dtype -> TypeError,
// wrong shape -> ValueError; never a silent cast) and GIL-free, Ctrl-C-interruptible loops.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace rebel_bindings {

namespace py = pybind11;

// A required object passed as None arrives as a null shared_ptr: TypeError, never a crash.
template <class T>
const T& require(const std::shared_ptr<T>& p, const char* what) {
  if (!p) throw py::type_error(std::string(what) + " must not be None");
  return *p;
}

inline std::string shape_string(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// ValueError unless `a` has exactly the given shape (-1 = any extent).
inline void check_shape(const py::array& a, const std::vector<py::ssize_t>& shape, const std::string& what) {
  bool ok = a.ndim() == static_cast<py::ssize_t>(shape.size());
  for (size_t i = 0; ok && i < shape.size(); ++i) ok = shape[i] < 0 || a.shape(i) == shape[i];
  if (!ok) {
    std::string expected = "(";
    for (size_t i = 0; i < shape.size(); ++i)
      expected += (i ? ", " : "") + (shape[i] < 0 ? std::string("any") : std::to_string(shape[i]));
    expected += shape.size() == 1 ? ",)" : ")";
    throw py::value_error(what + " has shape " + shape_string(a) + ", expected " + expected);
  }
}

// True if `a` holds `want`'s type in native byte order. Not an identity test of the dtype
// objects: an array that went through pickle (Ray's object store) has an equal dtype
// that is another object.
inline bool same_dtype(const py::array& a, const py::dtype& want) {
  const py::dtype have = a.dtype();
  if (have.is(want)) return true;
  return have.num() == want.num() && have.attr("isnative").cast<bool>();
}

// Accepts a float64 array of exactly the given shape (-1 = any) and copies it.
inline std::vector<double> to_double_vector(const py::handle& obj, const std::vector<py::ssize_t>& shape,
                                            const std::string& what) {
  if (!py::isinstance<py::array>(obj)) {
    // Plain Python sequences of numbers are accepted and converted to float64.
    py::array converted;
    try {
      converted = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(obj);
    } catch (...) {
    }
    if (!converted) throw py::type_error(what + " must be a numpy float64 array or a sequence of numbers");
    return to_double_vector(converted, shape, what);
  }
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (!same_dtype(a, py::dtype::of<double>())) {
    throw py::type_error(what + " must have dtype float64, got " + std::string(py::str(a.dtype())));
  }
  check_shape(a, shape, what);
  auto c = py::array_t<double, py::array::c_style>::ensure(a);
  return std::vector<double>(c.data(), c.data() + c.size());
}

// A numpy float32 array of exactly the given shape (-1 = any), as a C-contiguous view
// (copied only when the input is not contiguous). Anything else is a TypeError: no casts.
inline py::array_t<float, py::array::c_style> require_float32_array(const py::handle& obj,
                                                                    const std::vector<py::ssize_t>& shape,
                                                                    const std::string& what) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(what + " must be a numpy float32 array, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (!same_dtype(a, py::dtype::of<float>())) {
    throw py::type_error(what + " must have dtype float32, got " + std::string(py::str(a.dtype())));
  }
  check_shape(a, shape, what);
  return py::array_t<float, py::array::c_style>::ensure(a);
}

inline py::array_t<double> to_array_2d(const std::vector<double>& v, py::ssize_t rows, py::ssize_t cols) {
  py::array_t<double> out({rows, cols});
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

inline py::array_t<double> to_array_1d(const std::vector<double>& v) {
  py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

// Runs `total` units of work in chunks with the GIL released; between chunks checks for
// Ctrl-C (KeyboardInterrupt propagates) and reports progress via `on_chunk(done)`.
template <class Work, class Progress>
void run_in_chunks(long total, long chunk, Work&& work, Progress&& on_chunk) {
  for (long done = 0; done < total;) {
    const long n = std::min(chunk, total - done);
    {
      py::gil_scoped_release release;
      work(n);
    }
    done += n;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    on_chunk(done);
  }
}

template <class Work>
void run_in_chunks(long total, long chunk, Work&& work) {
  run_in_chunks(total, chunk, std::forward<Work>(work), [](long) {});
}

}  // namespace rebel_bindings

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <thread>

namespace rebel_bindings {

// Runs `work(cancel)` on a background thread while this (Python) thread waits without
// the GIL, checking for Ctrl-C every 50 ms and calling `on_poll()` (with the GIL) for
// progress reporting. On KeyboardInterrupt, or an exception from `on_poll` (a progress
// callback that raises, or Ctrl-C arriving while it runs Python code), `cancel` is raised,
// the work is awaited and that exception propagates. Exceptions from `work` are rethrown here.
inline void run_cancellable(const std::function<void(std::atomic<bool>*)>& work,
                            const std::function<void()>& on_poll = {}) {
  std::atomic<bool> cancel{false};
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::thread runner([&] {
    try {
      work(&cancel);
    } catch (...) {
      error = std::current_exception();
    }
    done = true;
  });
  bool interrupted = false;
  while (!done.load()) {
    {
      py::gil_scoped_release release;
      for (int i = 0; i < 10 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      cancel = true;
    }
    if (!interrupted && on_poll) {
      try {
        on_poll();
      } catch (...) {
        // The runner must be joined before this frame unwinds (a joinable std::thread's
        // destructor terminates the process).
        cancel = true;
        {
          py::gil_scoped_release release;
          runner.join();
        }
        throw;
      }
    }
  }
  {
    py::gil_scoped_release release;
    runner.join();
  }
  if (interrupted) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
}

}  // namespace rebel_bindings
